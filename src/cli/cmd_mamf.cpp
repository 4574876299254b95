// `upgradebench mamf`: the matmul ceiling (measure/mamf.hpp says how it is measured), a superset
// of mamf-finder.py: same shapes flags, every top-K cuBLASLt algorithm, validated results, clocks
// and throttle state per shape, a fast --search, several GPUs at once. The tables and --json are
// the view of its records (report/measurement_views.hpp).
#include <fmt/format.h>

#include "base/error.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_binary.hpp"
#include "cli/measuring_shell.hpp"
#include "cli/timing_flags.hpp"
#include "facts/step_gemms.hpp"
#include "records/mamf_result.hpp"

#ifdef UB_HAVE_CUDA
#include "cli/gpu_workers.hpp"
#include "measure/mamf.hpp"
#endif

namespace ub::cli {

namespace {

struct MamfOptions {
  std::vector<std::string> m, n, k;
  std::vector<int64_t> m_range, n_range, k_range;
  std::string dtype = "bf16";
  int workspace_mib = 64;
  // --shapes-of: the products one training step of this model runs.
  std::string shapes_of, seqlen = "8k", mlp_tile = "0", loss_chunk = "0";
  int64_t layers = 0, batch = 1;
  bool checkpointing = false;
  MamfConfig config;
  ShellOptions shell;
};

#ifdef UB_HAVE_CUDA
// The distinct products of one training step as listed shapes (facts/step_gemms.hpp).
void list_step_shapes(Context& ctx, MamfOptions& o, const CLI::App& cmd) {
  for (const char* grid : {"--m", "--n", "--k", "--m-range", "--n-range", "--k-range"}) {
    if (cmd.count(grid)) throw UsageError(fmt::format("--shapes-of lists the shapes itself: {} does not go with it", grid));
  }
  const ModelShape m = ctx.model(o.shapes_of, o.layers);
  StepLevers levers;
  levers.batch = o.batch;
  levers.checkpointing = o.checkpointing;
  levers.mlp_tile = o.mlp_tile == "0" ? 0 : parse_size(o.mlp_tile, "--mlp-tile");
  levers.loss_chunk = o.loss_chunk == "0" ? 0 : parse_size(o.loss_chunk, "--loss-chunk");
  const int64_t seqlen = parse_size(o.seqlen, "--seqlen");
  if (o.batch < 1) throw UsageError("--batch must be at least 1");
  MamfConfig& cfg = o.config;
  for (const StepGemm& g : distinct_shapes(step_gemms(m, seqlen, levers))) {
    cfg.ms.push_back(g.m), cfg.ns.push_back(g.n), cfg.ks.push_back(g.k);
    cfg.listed.push_back({g.name, g.count});
  }
  cfg.listed_from = fmt::format("{}, {} layers, seqlen {}, batch {}{}{}{}", o.shapes_of, m.layers, seqlen, o.batch,
                                levers.checkpointing ? ", checkpointing" : "",
                                levers.mlp_tile ? fmt::format(", MLP tiles of {}", levers.mlp_tile) : "",
                                levers.loss_chunk ? fmt::format(", loss chunks of {}", levers.loss_chunk) : "");
}

void run(Context& ctx, MamfOptions& o, const CLI::App& cmd) {
  MamfConfig& cfg = o.config;
  cfg.dtype = parse_dtype_list(o.dtype, "--dtype").at(0);
  if (!o.shapes_of.empty()) {
    list_step_shapes(ctx, o, cmd);
  } else {
    for (const char* step : {"--seqlen", "--layers", "--batch", "--checkpointing", "--mlp-tile", "--loss-chunk"}) {
      if (cmd.count(step)) throw UsageError(fmt::format("{} describes the step of --shapes-of MODEL: give it too", step));
    }
  }
  cfg.ms = cfg.listed.empty() ? sizes_from(o.m, o.m_range, "m") : cfg.ms;
  cfg.ns = cfg.listed.empty() ? sizes_from(o.n, o.n_range, "n") : cfg.ns;
  cfg.ks = cfg.listed.empty() ? sizes_from(o.k, o.k_range, "k") : cfg.ks;
  // Defaults: the 27-shape set (M, N in 2048/4096/8192, K in 4096/8192/13312), or for --search
  // the grid 1024..16384 step 2048 in every dimension.
  const std::vector<int64_t> grid = expand_range(1024, 16385, 2048, "grid");
  if (cfg.ms.empty()) cfg.ms = cfg.search ? grid : std::vector<int64_t>{2048, 4096, 8192};
  if (cfg.ns.empty()) cfg.ns = cfg.search ? grid : std::vector<int64_t>{2048, 4096, 8192};
  if (cfg.ks.empty()) cfg.ks = cfg.search ? grid : std::vector<int64_t>{4096, 8192, 13312};
  if (o.workspace_mib < 0 || o.workspace_mib > 4096) throw UsageError("--workspace-mib must be within 0..4096");
  cfg.workspace_bytes = static_cast<size_t>(o.workspace_mib) << 20;
  cfg.validate();

  auto run = start_gpu_run(ctx, "mamf", o.shell.devices, o.shell.out, cfg);
  const auto results = measure_each_device<MamfOutcome>(*run, [&](measure::DeviceRun& d) {
    measure::MamfBenchmark b(cfg, d);
    measure::run_benchmark(b, d);
    return b.outcome();
  });
  finish_gpu_run(ctx, *run, report::mamf_view(results, cfg.dtype, cfg.search, ctx.catalog()), o.shell.output);
}
#else
void run(Context& ctx, MamfOptions&, const CLI::App&) {
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
  cmd->add_option("--shapes-of", o->shapes_of,
                  "Instead of a grid, the products one training step of this model runs (preset or config.json), "
                  "each timed with how often the step runs it; the summary gives their rate as the step runs them");
  cmd->add_option("--seqlen", o->seqlen, "--shapes-of: tokens per sequence (k = 1024)")->capture_default_str();
  cmd->add_option("--layers", o->layers, "--shapes-of: keep only the first N layers (0: all)")->capture_default_str();
  cmd->add_option("--batch", o->batch, "--shapes-of: sequences per step")->capture_default_str();
  cmd->add_flag("--checkpointing", o->checkpointing, "--shapes-of: the step recomputes each layer's forward");
  cmd->add_option("--mlp-tile", o->mlp_tile, "--shapes-of: MLP tile in tokens (see train)")->capture_default_str();
  cmd->add_option("--loss-chunk", o->loss_chunk, "--shapes-of: lm_head chunk in tokens (see train)")->capture_default_str();
  add_shell_options(*cmd, ctx, o->shell, "mamf", {.devices = true});
  cmd->callback([&ctx, o, cmd] { run(ctx, *o, *cmd); });
}

}  // namespace ub::cli
