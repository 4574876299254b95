// `upgradebench bandwidth`: HBM copy / read / write bandwidth against the catalog's figure
// (measure/bandwidth.hpp says how it is measured). The table and --json come from the records.
#include <fmt/format.h>

#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_binary.hpp"
#include "cli/output.hpp"
#include "cli/run_inputs.hpp"
#include "cli/timing_flags.hpp"
#include "records/bandwidth_records.hpp"
#include "report/format.hpp"

#ifdef UB_HAVE_CUDA
#include "cli/gpu_workers.hpp"
#include "measure/bandwidth.hpp"
#endif

namespace ub::cli {

namespace {

using nlohmann::json;
using report::Align;

struct BandwidthOptions {
  std::string sizes = "4M,16M,64M,256M,1G,4G";
  std::string ops = "copy,read,write";
  std::string devices = "0";
  std::string out;
  BandwidthConfig config;
  OutputOptions output;
};

void run(Context& ctx, BandwidthOptions& o) {
  BandwidthConfig& cfg = o.config;
  cfg.sizes = parse_size_list(o.sizes, "--sizes");
  cfg.ops = split(o.ops, ',');
  cfg.validate();
#ifdef UB_HAVE_CUDA
  auto run = start_gpu_run(ctx, "bandwidth", o.devices, o.out, cfg);
  const auto results = measure_each_device<std::vector<BandwidthRecord>>(*run, [&](measure::DeviceRun& d) {
    measure::BandwidthBenchmark b(cfg, d);
    measure::run_benchmark(b, d);
    return b.results();
  });
  report::Document doc;
  json j = json::array();
  for (const auto& [d, points] : results) {
    const Accelerator* a = catalog_entry(ctx, d.device_name);
    const std::optional<double> spec =
        a && a->bandwidth_tbps.known() ? std::optional<double>(a->bandwidth_tbps.value * 1000) : std::nullopt;
    auto& b = doc.add(fmt::format("GPU {}: {} (catalog {} GB/s)", d.device, d.device_name, report::num(spec, 0)));
    b.table.columns = {{"op", Align::left}, {"size"}, {"GB/s median"}, {"GB/s mean"},
                       {"GB/s max"}, {"of spec"}, {"note", Align::left}};
    for (const BandwidthRecord& p : points) {
      const std::string size = p.bytes >= (1 << 30) ? fmt::format("{} GiB", p.bytes >> 30)
                                                    : fmt::format("{} MiB", p.bytes >> 20);
      const std::optional<double> frac =
          p.ok && spec && !p.in_l2 ? std::optional<double>(p.median_gbps / *spec) : std::nullopt;
      b.table.add_row({p.op, size, p.ok ? report::num(p.median_gbps) : "-", p.ok ? report::num(p.mean_gbps) : "-",
                       p.ok ? report::num(p.max_gbps) : "-", report::percent(frac),
                       p.ok ? (p.in_l2 ? "in L2" : "") : p.error});
      j.push_back({{"device", p.device}, {"op", p.op}, {"bytes", p.bytes}, {"ok", p.ok}, {"median_gbps", p.median_gbps},
                   {"mean_gbps", p.mean_gbps}, {"max_gbps", p.max_gbps}, {"in_l2", p.in_l2},
                   {"fraction_of_spec", or_null(frac)}, {"record", p}});
    }
    b.notes.push_back("GB/s counts bytes read plus bytes written (a copy of B bytes moves 2B). "
                      "Each kernel's result was checked before it was timed.");
  }
  finish_gpu_run(ctx, *run, doc, j, o.output);
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
  cmd->add_option("--devices", o->devices, "GPU indices, or 'all' (measured at the same time)")->capture_default_str();
  cmd->add_option("--out", o->out, "Records file (JSON lines; default upgradebench-bandwidth-<date>.jsonl)");
  o->output.add_to(*cmd);
  add_record_db_flag(*cmd, ctx);
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
