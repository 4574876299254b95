// `upgradebench nccl`: collective bandwidth, nccl-tests' measurements and then some
// (measure/nccl.hpp says how it is measured): every collective checked before it is timed, the
// ranks sampling until the median is known, latency, algbw and busbw (docs/nccl.md) against the
// catalog's interconnect figure. One process per GPU: started by torchrun --no-python, srun or
// mpirun, or by `--gpus N` on one host; rank 0 writes the records and the table (the view of its
// records, report/measurement_views.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_binary.hpp"
#include "cli/measuring_shell.hpp"
#include "cli/timing_flags.hpp"
#include "records/nccl_records.hpp"

#ifdef UB_HAVE_CUDA
#include "cli/gpu_job.hpp"
#include "cli/gpu_workers.hpp"
#include "measure/nccl.hpp"
#include "report/measurement_views.hpp"
#endif

namespace ub::cli {

namespace {

struct NcclOptions {
  std::string collectives = "all_reduce,all_gather,reduce_scatter";
  std::string dtypes = "bf16";
  std::string min_bytes = "1M", max_bytes = "4G", sizes;
  double factor = 2;
  std::string placement = "both";
  JobOptions job{"", 60};
  NcclConfig config;
  ShellOptions shell;
};

void configure(NcclOptions& o) {
  NcclConfig& c = o.config;
  c.collectives = parse_collective_list(o.collectives, "--ops");
  c.dtypes = parse_dtype_list(o.dtypes, "--dtypes");
  if (!o.sizes.empty()) {
    c.sizes = parse_size_list(o.sizes, "--sizes");
  } else {
    const int64_t lo = parse_size(o.min_bytes, "-b"), hi = parse_size(o.max_bytes, "-e");
    if (!(o.factor > 1)) throw UsageError("-f: the factor between sizes must be above 1");
    if (lo > hi) throw UsageError(fmt::format("-b {} is above -e {}", o.min_bytes, o.max_bytes));
    // As mamf's ranges: a list of sizes is bounded before it is built (a factor of 1.00000001 from
    // 1 byte to 4G would be billions of them).
    constexpr double kMaxSizes = 10000;
    const double count = std::log(static_cast<double>(hi) / static_cast<double>(std::max<int64_t>(lo, 1))) / std::log(o.factor) + 1;
    if (!(count <= kMaxSizes)) {
      throw UsageError(fmt::format("-b {} -e {} -f {}: {:.0f} sizes, more than {:.0f}: give a larger factor", o.min_bytes,
                                   o.max_bytes, o.factor, count, kMaxSizes));
    }
    for (double s = static_cast<double>(lo); s <= static_cast<double>(hi) * (1 + 1e-12); s *= o.factor) {
      c.sizes.push_back(static_cast<int64_t>(s));
    }
  }
  if (o.placement != "both" && o.placement != "in" && o.placement != "out") {
    throw UsageError(fmt::format("--place '{}': both, in (in-place) or out (out-of-place)", o.placement));
  }
  c.in_place = o.placement != "out";
  c.out_of_place = o.placement != "in";
}

#ifdef UB_HAVE_CUDA
// The header of the table: the world, the GPU, NCCL and how rank 0's first two GPUs are linked.
std::string world_line(const WorldFacts& w, const std::string& gpu) {
  return fmt::format("{} rank(s) on {} host(s), {}; NCCL {}; {}", w.size, w.hosts, gpu, w.nccl_version,
                     w.topology.size() > 1 ? "GPU 0 to 1: " + w.topology[0][1] : "one GPU per host");
}

void run(Context& ctx, NcclOptions& o) {
  configure(o);
  const dist::Launch launch = dist::launch_from(dist::launch_environment());
  if (o.job.gpus.empty()) o.config.validate(launch.world_size);  // before anything is started
  const auto config = [&](const GpuJob&) { return nlohmann::json(o.config); };
  run_job(ctx, "nccl", o.job, o.shell.out, config, [&](RankRun& r) {
    measure::NcclBenchmark b(o.config, r.device, *r.job.comm);
    measure::run_benchmark(b, r.device);
    if (!r.run) return;
    std::vector<NcclPoint> points;
    for (const NcclRecord& rec : b.results()) points.push_back({rec, rec.time_us()});
    const Accelerator* gpu = catalog_entry(ctx, r.device.device_name);
    r.run->emit(report::nccl_view(world_line(r.job.world, r.device.device_name), points, gpu, true), o.shell.output);
  });
}
#else
void run(Context& ctx, NcclOptions& o) {
  configure(o);
  run_in_gpu_binary(ctx, "nccl");
}
#endif

}  // namespace

void register_nccl(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<NcclOptions>();
  auto* cmd = app.add_subcommand("nccl", "Collective bandwidth (NCCL): every result checked, latency, algbw and "
                                         "busbw per size, one process per GPU");
  cmd->add_option("--ops", o->collectives,
                  "Collectives: all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv, or all")
      ->capture_default_str();
  cmd->add_option("--dtypes", o->dtypes, "bf16, fp16, fp32, fp8 (e4m3)")->capture_default_str();
  cmd->add_option("-b,--min-bytes", o->min_bytes, "Smallest size (k, M, G: powers of 1024), as nccl-tests -b")
      ->capture_default_str();
  cmd->add_option("-e,--max-bytes", o->max_bytes, "Largest size, as nccl-tests -e")->capture_default_str();
  cmd->add_option("-f,--step-factor", o->factor, "Factor between sizes, as nccl-tests -f")->capture_default_str();
  cmd->add_option("--sizes", o->sizes, "Or a list of sizes (e.g. 1M,256M,4G)");
  cmd->add_option("--place", o->placement, "both, in (in-place) or out (out-of-place)")->capture_default_str();
  cmd->add_option("--root", o->config.root, "Root rank of broadcast and reduce")->capture_default_str();
  cmd->add_flag("--graph", o->config.graph, "Capture each sample's calls once in a CUDA graph and replay it");
  add_timing_flags(*cmd, o->config.timing);
  add_job_options(*cmd, o->job);
  add_shell_options(*cmd, ctx, o->shell, "nccl", {});
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
