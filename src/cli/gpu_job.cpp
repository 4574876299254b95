// Joining a job of GPUs; see gpu_job.hpp.
#include "cli/gpu_job.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "base/error.hpp"
#include "cli/fatbin_architectures.hpp"
#include "cli/gpu_workers.hpp"
#include "cli/interrupt.hpp"
#include "dist/fault.hpp"
#include "dist/spawn.hpp"
#include "gpu/check.hpp"
#include "gpu/device.hpp"
#include "gpu/nvml.hpp"

extern char** environ;

namespace ub::cli {

namespace {

// Ends this process after the failure message, whatever blocks: the communicator's abort is given
// 20 s, then the process exits anyway.
[[noreturn]] void end_job(GpuJob* job, int me, int failed, const std::string& reason) {
  std::fprintf(stderr, "upgradebench: rank %d: the job failed: rank %d failed first: %s\n", me, failed, reason.c_str());
  std::fflush(stderr);
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds(20));
    std::_Exit(1);
  }).detach();
  if (job && job->comm) job->comm->abort();
  std::_Exit(1);
}

std::string hostname() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

WorldFacts world_of(const GpuJob& job) {
  WorldFacts w;
  w.launcher = job.launch.launcher;
  w.size = job.launch.world_size;
  std::set<std::string> hosts;
  std::map<std::string, int> per_host;
  for (size_t r = 0; r < job.rendezvous->infos().size(); ++r) {
    const auto info = nlohmann::json::parse(job.rendezvous->infos()[r]);
    WorldRank wr;
    wr.rank = static_cast<int>(r);
    wr.local_rank = info.value("local_rank", 0);
    wr.device = info.value("device", 0);
    wr.host = info.value("host", "");
    wr.gpu = info.value("gpu", "");
    wr.uuid = info.value("uuid", "");
    wr.pci_bus_id = info.value("pci_bus_id", "");
    hosts.insert(wr.host);
    ++per_host[wr.host];
    w.ranks.push_back(wr);
  }
  w.hosts = static_cast<int>(hosts.size());
  for (const auto& [h, n] : per_host) w.gpus_per_host = std::max(w.gpus_per_host, n);
  std::string why;
  if (auto nvml = gpu::Nvml::open(&why)) {
    std::vector<std::string> local;
    for (const WorldRank& r : w.ranks) {
      if (r.host == w.ranks.front().host) local.push_back(r.uuid);
    }
    for (const std::string& a : local) {
      std::vector<std::string> row;
      for (const std::string& b : local) row.push_back(nvml->link_between(a, b));
      w.topology.push_back(row);
    }
  }
  w.nccl_version = gpu::nccl_loaded_version();
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("NCCL_", 0) == 0) {
      const size_t eq = kv.find('=');
      w.nccl_env[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
    }
  }
  return w;
}

}  // namespace

void GpuJob::fail(const std::string& reason) {
  rendezvous->report_failure(reason);  // the handler ends the process
  end_job(this, launch.rank, launch.rank, reason);
}

std::unique_ptr<GpuJob> join_gpu_job(double rendezvous_timeout_s) {
  auto job = std::make_unique<GpuJob>();
  job->launch = dist::launch_from(dist::launch_environment());
  const dist::Launch& l = job->launch;
  const gpu::DeviceList list = gpu::list_devices();
  if (list.devices.empty()) throw WorkError(fmt::format("rank {}: {}", l.rank, list.why_none));
  if (l.local_rank >= static_cast<int>(list.devices.size())) {
    throw UsageError(fmt::format("rank {}: local rank {} but this host has {} GPU(s) (one rank per GPU)", l.rank,
                                 l.local_rank, list.devices.size()));
  }
  job->device = l.local_rank;
  const gpu::DeviceInfo& d = list.devices[static_cast<size_t>(job->device)];
  check_runs_on(own_architectures(), d.cc_major * 10 + d.cc_minor, fmt::format("rank {}: GPU {} ({})", l.rank, job->device, d.name));
  UB_CUDA_CHECK(cudaSetDevice(job->device));
  dist::fault_point("rendezvous", l.rank);
  const nlohmann::json info = {{"host", hostname()}, {"local_rank", l.local_rank}, {"device", job->device},
                               {"gpu", d.name}, {"uuid", d.uuid}, {"pci_bus_id", d.pci_bus_id}};
  job->rendezvous = std::make_unique<dist::Rendezvous>(l, info.dump(), [] { return gpu::nccl_unique_id(); },
                                                       rendezvous_timeout_s);
  GpuJob* raw = job.get();
  job->rendezvous->watch([raw](int failed, const std::string& reason) { end_job(raw, raw->launch.rank, failed, reason); });
  dist::fault_point("nccl_init", l.rank);
  job->comm = std::make_unique<gpu::NcclComm>(job->rendezvous->blob(), l.world_size, l.rank);
  job->comm->watch([raw](const std::string& error) { raw->rendezvous->report_failure(error); });
  job->world = world_of(*job);
  return job;
}

int run_local_ranks(const std::string& gpus, const std::vector<std::string>& argv) {
  long wanted = 0;  // 0: all
  if (gpus != "all") {
    char* end = nullptr;
    errno = 0;
    wanted = std::strtol(gpus.c_str(), &end, 10);
    if (end == gpus.c_str() || *end != '\0' || wanted < 1 || errno == ERANGE || wanted > 4096) {
      throw UsageError(fmt::format("--gpus: '{}' is not a number of GPUs or 'all'", gpus));
    }
  }
  const gpu::DeviceList list = gpu::list_devices();
  if (list.devices.empty()) throw WorkError(fmt::format("--gpus: {}", list.why_none));
  const int n = wanted == 0 ? static_cast<int>(list.devices.size()) : static_cast<int>(wanted);
  if (n > static_cast<int>(list.devices.size())) {
    throw UsageError(fmt::format("--gpus {}: this host has {} GPU(s)", n, list.devices.size()));
  }
  const dist::SpawnResult r = dist::spawn_local_ranks(n, dist::without_gpus_option(argv));
  if (r.first_failed_rank >= 0) {
    std::fprintf(stderr, "upgradebench: --gpus %d: rank %d ended first, with %s\n", n, r.first_failed_rank, r.how.c_str());
  }
  return r.exit_code;
}

void run_job(Context& ctx, const std::string& command, const JobOptions& o, const std::string& out,
             const std::function<nlohmann::json(const GpuJob&)>& configure,
             const std::function<void(RankRun&)>& work) {
  const dist::Launch launch = dist::launch_from(dist::launch_environment());
  if (!o.gpus.empty()) {
    if (launch.launcher != "none") throw UsageError(fmt::format("--gpus is for a run without a launcher (this is {})", launch.launcher));
    ctx.exit_code = run_local_ranks(o.gpus, ctx.argv);
    return;
  }
  o.validate();
  auto job = join_gpu_job(o.rendezvous_timeout_s);
  std::unique_ptr<GpuRun> run;
  PointCounts counts;
  try {
    const nlohmann::json config = configure(*job);
    if (job->leader()) run = start_gpu_run(ctx, command, std::to_string(job->device), out, config, nlohmann::json(job->world));
    measure::DeviceRun d = measure::open_device_run(job->device, run ? run->writer.get() : nullptr,
                                                    run ? &run->progress : nullptr, &install_interrupt_handler());
    d.agree = [&job](bool stop) { return job->comm->any_rank(stop); };
    dist::fault_point("measure", job->launch.rank);
    RankRun r{*job, d, run.get()};
    work(r);
    counts = d.counts;
  } catch (const std::exception& e) {
    job->fail(e.what());
  }
  // Every rank saw the same checks (a collective's is summed over the ranks): the leader says why,
  // once the job has ended in good order (unwinding through it would end it as a failure).
  const bool leader = run != nullptr, interrupted = run && run->interrupted->load();
  const std::string records = run ? run->writer->path().string() : "";
  run.reset();
  job.reset();
  if (leader) {
    finish_measurement(ctx, command, counts, interrupted, records);
  } else if (counts.wrong > 0) {
    ctx.exit_code = 1;
  }
}

}  // namespace ub::cli
