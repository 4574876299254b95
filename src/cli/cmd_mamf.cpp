// `upgradebench mamf`: the matmul ceiling (bench/mamf.hpp says how it is measured), a superset of
// mamf-finder.py: same shapes flags, every top-K cuBLASLt algorithm, validated results, clocks
// and throttle state per shape, a fast --search, several GPUs at once.
#include <fmt/format.h>


#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "report/format.hpp"

#ifdef UB_HAVE_CUDA
#include "measure/mamf.hpp"
#include "cli/gpu_workers.hpp"
#endif

namespace ub::cli {

namespace {

using nlohmann::json;
using report::Align;

struct MamfOptions {
  std::vector<std::string> m, n, k;
  std::vector<int64_t> m_range, n_range, k_range;
  std::string dtype = "bf16";
  int top_k = 8;
  double warmup_s = 10;
  double max_seconds = 1.0;
  int min_samples = 20;
  double noise = 0.005;
  int check_samples = 256;
  int workspace_mib = 64;
  bool search = false;
  double search_budget_s = 0;
  std::string devices = "0";
  std::string out;
  OutputOptions output;
};

#ifdef UB_HAVE_CUDA
std::vector<int64_t> default_grid(bool search) {
  if (search) return expand_range(1024, 16385, 2048, "grid");
  return {};
}

void run(Context& ctx, const MamfOptions& o) {
  measure::MamfConfig cfg;
  cfg.dtype = parse_dtype_list(o.dtype, "--dtype").at(0);
  cfg.ms = sizes_from(o.m, o.m_range, "m");
  cfg.ns = sizes_from(o.n, o.n_range, "n");
  cfg.ks = sizes_from(o.k, o.k_range, "k");
  // Defaults: the 27-shape set (M, N in 2048/4096/8192, K in 4096/8192/13312), or for --search
  // the grid 1024..16384 step 2048 in every dimension.
  if (cfg.ms.empty()) cfg.ms = o.search ? default_grid(true) : std::vector<int64_t>{2048, 4096, 8192};
  if (cfg.ns.empty()) cfg.ns = o.search ? default_grid(true) : std::vector<int64_t>{2048, 4096, 8192};
  if (cfg.ks.empty()) cfg.ks = o.search ? default_grid(true) : std::vector<int64_t>{4096, 8192, 13312};
  for (const auto* v : {&cfg.ms, &cfg.ns, &cfg.ks}) {
    for (int64_t x : *v) {
      if (x > 65536) throw UsageError(fmt::format("matrix size {} is beyond 65536: absurd for a MAMF search", x));
    }
  }
  if (o.top_k < 1 || o.top_k > 64) throw UsageError("--top-k must be within 1..64");
  if (o.min_samples < 3) throw UsageError("--min-samples must be at least 3");
  if (!(o.noise > 0 && o.noise < 1)) throw UsageError("--noise must be within (0, 1)");
  if (o.warmup_s < 0 || o.max_seconds <= 0) throw UsageError("--warmup-s must be >= 0 and --max-seconds > 0");
  cfg.top_k = o.top_k;
  cfg.warmup_s = o.warmup_s;
  cfg.max_seconds_per_shape = o.max_seconds;
  cfg.min_samples = o.min_samples;
  cfg.target_noise = o.noise;
  cfg.check_samples = o.check_samples;
  cfg.workspace_bytes = static_cast<size_t>(o.workspace_mib) << 20;
  cfg.search = o.search;
  cfg.search_budget_s = o.search_budget_s;

  auto run = start_gpu_run(ctx, "mamf", o.devices, o.out, cfg.to_json());
  const auto results = measure_each_device<MamfOutcome>(
      *run, [&](measure::DeviceRun& s) { return measure::run_mamf(cfg, s); });

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
    const Accelerator* a = catalog_entry(ctx, s.device_name);
    const auto best = r.best(MamfOutcome::By::median);
    const auto best_max = r.best(MamfOutcome::By::max);
    std::optional<double> of_peak, of_mamf;
    if (best && a) {
      if (auto p = a->peak(cfg.dtype).get()) of_peak = best->median_tflops / *p;
      const auto& pub = cfg.dtype == Dtype::fp8 ? a->mamf_fp8 : cfg.dtype == Dtype::bf16 ? a->mamf_bf16 : std::nullopt;
      if (pub && pub->tflops.known()) of_mamf = best->median_tflops / pub->tflops.value;
    }
    int ok = 0;
    for (const MamfShape& sh : r.shapes) ok += sh.ok;
    per_gpu.table.add_row({fmt::format("{}", s.device), s.device_name, fmt::format("{}", ok),
                           best ? report::num(best->median_tflops) : "-", best ? best->shape() : "-",
                           best_max ? report::num(best_max->max_tflops) : "-",
                           report::num(r.arithmetic_mean(MamfOutcome::By::median)),
                           report::num(r.geometric_mean(MamfOutcome::By::median)),
                           report::percent(of_peak), report::percent(of_mamf),
                           report::num(r.elapsed_s)});
    json sj = r.summary_json();
    sj["device"] = s.device;
    sj["name"] = s.device_name;
    sj["fraction_of_peak"] = of_peak ? json(*of_peak) : json();
    sj["fraction_of_published_mamf"] = of_mamf ? json(*of_mamf) : json();
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
void run(Context&, const MamfOptions&) {
  throw WorkError("mamf: this binary was built without CUDA (nvcc was not found at build time)");
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
  cmd->add_option("--top-k", o->top_k, "cuBLASLt heuristic algorithms tried per shape")->capture_default_str();
  cmd->add_option("--warmup-s", o->warmup_s, "Seconds of GPU warm-up before the first shape")->capture_default_str();
  cmd->add_option("--max-seconds", o->max_seconds, "Time limit per shape's final timing")->capture_default_str();
  cmd->add_option("--min-samples", o->min_samples, "Fewest timed samples per shape")->capture_default_str();
  cmd->add_option("--noise", o->noise, "Stop when the median's 95% interval is within this fraction")->capture_default_str();
  cmd->add_option("--check-samples", o->check_samples, "Output elements checked against the reference")->capture_default_str();
  cmd->add_option("--workspace-mib", o->workspace_mib, "cuBLASLt workspace")->capture_default_str();
  cmd->add_flag("--search", o->search, "Find the ceiling without the full grid (coarse grid, then hill-climb)");
  cmd->add_option("--search-budget-s", o->search_budget_s, "Time budget for --search (0: until converged)");
  cmd->add_option("--devices", o->devices, "GPU indices, or 'all' (measured at the same time)")->capture_default_str();
  cmd->add_option("--out", o->out, "Records file (JSON lines; default upgradebench-mamf-<date>.jsonl)");
  o->output.add_to(*cmd);
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
