// `upgradebench mamf`: the matmul ceiling (measure/mamf.hpp says how it is measured), a superset
// of mamf-finder.py: same shapes flags, every top-K cuBLASLt algorithm, validated results, clocks
// and throttle state per shape, a fast --search, several GPUs at once. The tables and --json come
// from the records.
#include <fmt/format.h>


#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_binary.hpp"
#include "cli/output.hpp"
#include "cli/run_inputs.hpp"
#include "cli/timing_flags.hpp"
#include "records/mamf_result.hpp"
#include "report/format.hpp"

#ifdef UB_HAVE_CUDA
#include "cli/gpu_workers.hpp"
#include "measure/mamf.hpp"
#endif

namespace ub::cli {

namespace {

using nlohmann::json;
using report::Align;

struct MamfOptions {
  std::vector<std::string> m, n, k;
  std::vector<int64_t> m_range, n_range, k_range;
  std::string dtype = "bf16";
  int workspace_mib = 64;
  std::string devices = "0";
  MamfConfig config;
  std::string out;
  OutputOptions output;
};

#ifdef UB_HAVE_CUDA
void run(Context& ctx, MamfOptions& o) {
  MamfConfig& cfg = o.config;
  cfg.dtype = parse_dtype_list(o.dtype, "--dtype").at(0);
  cfg.ms = sizes_from(o.m, o.m_range, "m");
  cfg.ns = sizes_from(o.n, o.n_range, "n");
  cfg.ks = sizes_from(o.k, o.k_range, "k");
  // Defaults: the 27-shape set (M, N in 2048/4096/8192, K in 4096/8192/13312), or for --search
  // the grid 1024..16384 step 2048 in every dimension.
  const std::vector<int64_t> grid = expand_range(1024, 16385, 2048, "grid");
  if (cfg.ms.empty()) cfg.ms = cfg.search ? grid : std::vector<int64_t>{2048, 4096, 8192};
  if (cfg.ns.empty()) cfg.ns = cfg.search ? grid : std::vector<int64_t>{2048, 4096, 8192};
  if (cfg.ks.empty()) cfg.ks = cfg.search ? grid : std::vector<int64_t>{4096, 8192, 13312};
  if (o.workspace_mib < 0 || o.workspace_mib > 4096) throw UsageError("--workspace-mib must be within 0..4096");
  cfg.workspace_bytes = static_cast<size_t>(o.workspace_mib) << 20;
  cfg.validate();

  auto run = start_gpu_run(ctx, "mamf", o.devices, o.out, cfg);
  const auto results = measure_each_device<MamfOutcome>(*run, [&](measure::DeviceRun& d) {
    measure::MamfBenchmark b(cfg, d);
    measure::run_benchmark(b, d);
    return b.outcome();
  });

  report::Document doc;
  const bool several = results.size() > 1;
  auto& shapes = doc.add(fmt::format("{} matmul, TFLOPS = 2*M*N*K / time", to_string(cfg.dtype)));
  shapes.table.columns = {{"GPU"}, {"MxNxK", Align::left}, {"mean"}, {"median"}, {"max"}, {"status", Align::left}};
  auto& per_gpu = doc.add("Per GPU");
  per_gpu.table.columns = {{"GPU"}, {"name", Align::left}, {"shapes"}, {"best median"}, {"@ MxNxK", Align::left},
                           {"best max"}, {"arith. mean"}, {"geo. mean"}, {"of peak"}, {"of published MAMF"}, {"time s"}};
  json j = json::array();
  for (const auto& [s, r] : results) {
    for (const MamfShape& sh : r.shapes) {
      shapes.table.add_row({fmt::format("{}", s.device), sh.shape(),
                            sh.ok ? report::num(sh.mean_tflops) : "-",
                            sh.ok ? report::num(sh.median_tflops) : "-",
                            sh.ok ? report::num(sh.max_tflops) : "-", sh.ok ? "ok" : sh.error});
    }
    const MamfSummary sum = r.summary(s.device);
    const Accelerator* a = catalog_entry(ctx, s.device_name);
    std::optional<double> of_peak, of_mamf;
    if (sum.best_median && a) {
      if (auto p = a->peak(cfg.dtype).get()) of_peak = sum.best_median->tflops / *p;
      const auto& pub = cfg.dtype == Dtype::fp8 ? a->mamf_fp8 : cfg.dtype == Dtype::bf16 ? a->mamf_bf16 : std::nullopt;
      if (pub && pub->tflops.known()) of_mamf = sum.best_median->tflops / pub->tflops.value;
    }
    per_gpu.table.add_row({fmt::format("{}", s.device), s.device_name, fmt::format("{}", sum.shapes),
                           sum.best_median ? report::num(sum.best_median->tflops) : "-",
                           sum.best_median ? sum.best_median->shape : "-",
                           sum.best_max ? report::num(sum.best_max->tflops) : "-", report::num(sum.arithmetic_of_medians),
                           report::num(sum.geometric_of_medians), report::percent(of_peak), report::percent(of_mamf),
                           report::num(sum.elapsed_s)});
    json sj = sum;
    sj["name"] = s.device_name;
    sj["fraction_of_peak"] = or_null(of_peak);
    sj["fraction_of_published_mamf"] = or_null(of_mamf);
    j.push_back(sj);
    if (cfg.search) {
      per_gpu.notes.push_back(fmt::format("GPU {}: search looked at {} shapes in {:.1f} s.", s.device,
                                          r.shapes_screened, r.elapsed_s));
    }
    for (const std::string& line : split(r.footer(), '\n')) {
      per_gpu.notes.push_back(several ? fmt::format("GPU {}: {}", s.device, line) : line);
    }
  }
  finish_gpu_run(ctx, *run, doc, j, o.output);
}
#else
void run(Context& ctx, MamfOptions&) {
  run_in_gpu_binary(ctx, "mamf");
}
#endif

}  // namespace

void register_mamf(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<MamfOptions>();
  auto* cmd = app.add_subcommand("mamf", "Matmul ceiling (MAMF) over shapes and dtypes, every "
                                         "top-K cuBLASLt algorithm validated and timed");
  cmd->add_option("--m", o->m, "M sizes: a list (2048 4096 or 2048,4096)")->expected(1, 10000);
  cmd->add_option("--n", o->n, "N sizes")->expected(1, 10000);
  cmd->add_option("--k", o->k, "K sizes")->expected(1, 10000);
  cmd->add_option("--m-range", o->m_range, "START STOP STEP (stop excluded; start 0 means STEP)")->expected(3);
  cmd->add_option("--n-range", o->n_range, "START STOP STEP")->expected(3);
  cmd->add_option("--k-range", o->k_range, "START STOP STEP")->expected(3);
  cmd->add_option("--dtype", o->dtype, "bf16, fp16, tf32, fp32, fp8 (e4m3), mxfp8, nvfp4")->capture_default_str();
  cmd->add_option("--top-k", o->config.top_k, "cuBLASLt heuristic algorithms tried per shape")->capture_default_str();
  add_timing_flags(*cmd, o->config.timing);
  cmd->add_option("--check-samples", o->config.check_samples, "Output elements checked against the reference")
      ->capture_default_str();
  cmd->add_option("--workspace-mib", o->workspace_mib, "cuBLASLt workspace")->capture_default_str();
  cmd->add_flag("--search", o->config.search, "Find the ceiling without the full grid (coarse grid, then hill-climb)");
  cmd->add_option("--search-budget-s", o->config.search_budget_s, "Time budget for --search (0: until converged)");
  cmd->add_option("--devices", o->devices, "GPU indices, or 'all' (measured at the same time)")->capture_default_str();
  cmd->add_option("--out", o->out, "Records file (JSON lines; default upgradebench-mamf-<date>.jsonl)");
  o->output.add_to(*cmd);
  add_record_db_flag(*cmd, ctx);
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
