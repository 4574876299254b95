// `upgradebench train`: one training step of a Llama-family model (our engine: cuBLASLt GEMMs,
// cuDNN attention, our kernels, AdamW), repeated (measure/train.hpp); like the ml-engineering
// guide's benchmark.py it prints one JSON record per step on stdout after the context record, and
// appends the same records to --out. A length that does not fit becomes a train_oom record and
// exit code 3.
#include <fmt/format.h>

#include <cstdio>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_binary.hpp"
#include "cli/context.hpp"
#include "cli/run_inputs.hpp"
#include "cli/train_options.hpp"
#include "core/error.hpp"
#include "core/records/train_records.hpp"
#include "core/trace/kernel_classes.hpp"

#ifdef UB_HAVE_CUDA
#include "cli/gpu_workers.hpp"
#include "measure/train.hpp"
#endif

namespace ub::cli {

namespace {

struct TrainCommand {
  TrainOptions train;
  bool breakdown = false;
  int profile_steps = 3;
};

void run(Context& ctx, const TrainCommand& c) {
  const TrainOptions& o = c.train;
  TrainConfig cfg = train_config(ctx, o);
  cfg.breakdown = c.breakdown;
  cfg.profile_steps = c.profile_steps;
  cfg.validate();  // bad input is refused before a GPU is touched
#ifdef UB_HAVE_CUDA
  auto run = start_gpu_run(ctx, "train", std::to_string(o.device), o.out, cfg);
  auto echo = [](const nlohmann::json& rec) {
    std::fputs((rec.dump() + "\n").c_str(), stdout);
    std::fflush(stdout);
  };
  echo(run->context);
  measure::TrainSummary sum;
  for_each_device(*run, [&](measure::DeviceRun& d) {
    const Accelerator* gpu = catalog_entry(ctx, d.device_name);
    if (gpu) cfg.peak_tflops = gpu->peak(Dtype::bf16).get();
    d.echo = echo;
    trace::KernelClasses classes;
    if (cfg.breakdown) classes.add_file(ctx.data_dir() / "kernel_classes.json", false);
    measure::TrainBenchmark b(cfg, d, &classes, gpu);
    measure::run_benchmark(b, d);
    sum = b.summary();
  });
  if (sum.oom) {
    ctx.exit_code = kExitOutOfMemory;
    return;
  }
  if (!sum.ok) throw WorkError(fmt::format("train: {}", sum.error));
  run->progress.line(fmt::format("records: {}", run->writer->path().string()));
  if (run->interrupted->load()) ctx.exit_code = kExitInterrupted;
#else
  run_in_gpu_binary(ctx, "train");
#endif
}

}  // namespace

void register_train(CLI::App& app, Context& ctx) {
  auto c = std::make_shared<TrainCommand>();
  auto* cmd = app.add_subcommand("train", "Time training steps (forward, backward, AdamW) of a Llama-family model "
                                          "on our engine; one JSON record per step");
  add_workload_options(*cmd, c->train);
  add_engine_options(*cmd, c->train);
  cmd->add_flag("--breakdown", c->breakdown,
                "After the timed steps, profile more under CUPTI: time per kernel class and operation of the median "
                "one (train_breakdown record) and the step's decomposition (decomposition record)");
  cmd->add_option("--profile-steps", c->profile_steps, "How many steps --breakdown profiles")->capture_default_str();
  cmd->add_option("--out", c->train.out, "Records file (JSON lines, appended; default upgradebench-train-<date>.jsonl)");
  add_record_db_flag(*cmd, ctx);
  cmd->callback([&ctx, c] { run(ctx, *c); });
}

}  // namespace ub::cli
