// `upgradebench bandwidth`: HBM copy / read / write bandwidth against the catalog's figure
// (measure/bandwidth.hpp says how it is measured). The table and --json are the view of its
// records (report/measurement_views.hpp).
#include <fmt/format.h>

#include "base/text.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_binary.hpp"
#include "cli/measuring_shell.hpp"
#include "cli/timing_flags.hpp"
#include "records/bandwidth_records.hpp"

#ifdef UB_HAVE_CUDA
#include "cli/gpu_workers.hpp"
#include "measure/bandwidth.hpp"
#endif

namespace ub::cli {

namespace {

struct BandwidthOptions {
  std::string sizes = "4M,16M,64M,256M,1G,4G";
  std::string ops = "copy,read,write";
  BandwidthConfig config;
  ShellOptions shell;
};

void run(Context& ctx, BandwidthOptions& o) {
  BandwidthConfig& cfg = o.config;
  cfg.sizes = parse_size_list(o.sizes, "--sizes");
  cfg.ops = split(o.ops, ',');
  cfg.validate();
#ifdef UB_HAVE_CUDA
  auto run = start_gpu_run(ctx, "bandwidth", o.shell.devices, o.shell.out, cfg);
  const auto results = measure_each_device<std::vector<BandwidthRecord>>(*run, [&](measure::DeviceRun& d) {
    measure::BandwidthBenchmark b(cfg, d);
    measure::run_benchmark(b, d);
    return b.results();
  });
  finish_gpu_run(ctx, *run, report::bandwidth_view(results, ctx.catalog()), o.shell.output);
#else
  (void)ctx;
  run_in_gpu_binary(ctx, "bandwidth");
#endif
}

}  // namespace

void register_bandwidth(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<BandwidthOptions>();
  auto* cmd = app.add_subcommand("bandwidth", "HBM bandwidth (copy / read / write) against the spec");
  cmd->add_option("--sizes", o->sizes, "Buffer sizes (k, M, G suffixes = 1024 powers)")->capture_default_str();
  cmd->add_option("--ops", o->ops, "Operations: copy, read, write")->capture_default_str();
  cmd->add_option("--kernel", o->config.kernel,
                  "Kernel: tiled, tiled8, tiled8cs, tiled8pf, persistent, bulk, memcpy (the driver's copy, for reference)")
      ->capture_default_str();
  add_timing_flags(*cmd, o->config.timing);
  add_shell_options(*cmd, ctx, o->shell, "bandwidth", {.devices = true});
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
