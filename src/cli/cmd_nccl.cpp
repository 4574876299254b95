// `upgradebench nccl`: collective bandwidth, nccl-tests' measurements and then some
// (measure/nccl.hpp says how it is measured): every collective checked before it is timed, the
// ranks sampling until the median is known, latency, algbw and busbw (docs/nccl.md) against the
// catalog's interconnect figure. One process per GPU: started by torchrun --no-python, srun or
// mpirun, or by `--gpus N` on one host; rank 0 writes the records and the table.
#include <fmt/format.h>

#include <cstdio>

#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_binary.hpp"
#include "cli/output.hpp"
#include "cli/run_inputs.hpp"
#include "cli/timing_flags.hpp"
#include "records/nccl_records.hpp"
#include "report/format.hpp"

#ifdef UB_HAVE_CUDA
#include "cli/gpu_job.hpp"
#include "cli/gpu_workers.hpp"
#include "cli/interrupt.hpp"
#include "dist/fault.hpp"
#include "measure/nccl.hpp"
#endif

namespace ub::cli {

namespace {

using nlohmann::json;
using report::Align;

struct NcclOptions {
  std::string collectives = "all_reduce,all_gather,reduce_scatter";
  std::string dtypes = "bf16";
  std::string min_bytes = "1M", max_bytes = "4G", sizes;
  double factor = 2;
  std::string placement = "both";
  std::string gpus;
  double rendezvous_timeout_s = 60;
  std::string out;
  NcclConfig config;
  OutputOptions output;
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
void run(Context& ctx, NcclOptions& o) {
  configure(o);
  const dist::Launch launch = dist::launch_from(dist::launch_environment());
  if (!o.gpus.empty()) {
    if (launch.launcher != "none") throw UsageError(fmt::format("--gpus is for a run without a launcher (this is {})", launch.launcher));
    ctx.exit_code = run_local_ranks(o.gpus, ctx.argv);
    return;
  }
  o.config.validate(launch.world_size);  // before anything is started
  auto job = join_gpu_job(o.rendezvous_timeout_s);
  try {
    std::unique_ptr<GpuRun> run;
    if (job->leader()) {
      run = start_gpu_run(ctx, "nccl", std::to_string(job->device), o.out, o.config, json(job->world));
    }
    measure::DeviceRun d = measure::open_device_run(job->device, run ? run->writer.get() : nullptr,
                                                    run ? &run->progress : nullptr, &install_interrupt_handler());
    d.agree = [&job](bool stop) { return job->comm->any_rank(stop); };
    dist::fault_point("measure", job->launch.rank);
    measure::NcclBenchmark b(o.config, d, *job->comm);
    measure::run_benchmark(b, d);
    if (!run) return;
    // The table and --json, from the records (rank 0).
    const WorldFacts& w = job->world;
    const Accelerator* a = catalog_entry(ctx, d.device_name);
    const double one_way = a ? busbw_spec_gbps(*a).value_or(0) : 0;  // 0: unknown
    report::Document doc;
    auto& block = doc.add(fmt::format("{} rank(s) on {} host(s), {}; NCCL {}; {}", w.size, w.hosts, d.device_name,
                                      w.nccl_version, w.topology.size() > 1 ? "GPU 0 to 1: " + w.topology[0][1] : "one GPU per host"));
    block.table.columns = {{"collective", Align::left}, {"dtype", Align::left}, {"size"}, {"place", Align::left},
                           {"time us"}, {"95% interval"}, {"algbw GB/s"}, {"busbw GB/s"}, {"of spec"}, {"#wrong"},
                           {"note", Align::left}};
    json j = json::array();
    for (const NcclRecord& r : b.results()) {
      const std::optional<double> of_spec =
          r.ok && one_way > 0 && r.world_size > 1 ? std::optional<double>(r.busbw_gbps / one_way) : std::nullopt;
      const std::string interval =
          r.time ? fmt::format("{:.1f}-{:.1f}", r.time->ms.median_low * 1e3, r.time->ms.median_high * 1e3) : "-";
      block.table.add_row({std::string(to_string(r.collective)), r.dtype, binary_size_text(r.bytes),
                           r.in_place ? "in" : "out", r.ok ? report::num(r.time_us(), 2) : "-", interval,
                           r.ok ? report::num(r.algbw_gbps, 2) : "-", r.ok ? report::num(r.busbw_gbps, 2) : "-",
                           report::percent(of_spec), std::to_string(r.wrong), r.ok ? "" : r.error});
      j.push_back({{"collective", to_string(r.collective)}, {"dtype", r.dtype}, {"bytes", r.bytes},
                   {"in_place", r.in_place}, {"ok", r.ok}, {"time_us", r.time_us()}, {"algbw_gbps", r.algbw_gbps},
                   {"busbw_gbps", r.busbw_gbps}, {"fraction_of_spec", or_null(of_spec)}, {"wrong", r.wrong},
                   {"record", r}});
    }
    block.notes.push_back("Time per call of the slowest rank (median, with its 95% interval). algbw = size / time; busbw = "
                          "algbw x 2(n-1)/n for all_reduce, x (n-1)/n for all_gather, reduce_scatter and alltoall, x 1 "
                          "otherwise (docs/nccl.md). Every point was checked exactly before it was timed.");
    if (one_way > 0) {
      block.notes.push_back(fmt::format("Of spec: busbw over one direction of the catalog's {:.0f} GB/s bidirectional "
                                        "interconnect.", 2 * one_way));
    }
    finish_gpu_run(ctx, *run, doc, j, o.output);
  } catch (const std::exception& e) {
    job->fail(e.what());
  }
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
  cmd->add_option("--gpus", o->gpus, "Without a launcher: run N ranks on this host (N or 'all')");
  cmd->add_option("--rendezvous-timeout", o->rendezvous_timeout_s, "Seconds the ranks wait for each other")
      ->capture_default_str();
  cmd->add_option("--out", o->out, "Records file (rank 0; JSON lines; default upgradebench-nccl-<date>.jsonl)");
  o->output.add_to(*cmd);
  add_record_db_flag(*cmd, ctx);
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
