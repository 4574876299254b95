// `upgradebench train`: one training step of a Llama-family model (our engine: cuBLASLt GEMMs,
// cuDNN attention, our kernels, AdamW), repeated (measure/train.hpp); like the ml-engineering
// guide's benchmark.py it prints one JSON record per step on stdout after the context record, and
// appends the same records to --out. A length that does not fit becomes a train_oom record and
// exit code 3.
#include <fmt/format.h>

#include <cstdio>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "core/error.hpp"

#include "core/records/train_records.hpp"

#ifdef UB_HAVE_CUDA
#include "cli/gpu_workers.hpp"
#include "measure/train.hpp"
#endif

namespace ub::cli {

namespace {

struct TrainOptions {
  std::string model = "llama-3.1-8b";
  int64_t layers = 0;
  std::string seqlen = "8k";
  int64_t batch = 1;
  int steps = 10, warmup = 2;
  std::string precision = "master";
  AdamWParams adam;
  uint64_t seed = 1234;
  bool mem_debug = false;
  bool checkpointing = false, breakdown = false, no_autotune = false;
  std::string loss_chunk = "0";
  int device = 0;
  std::string out;
};

void run(Context& ctx, const TrainOptions& o) {
  TrainConfig cfg;
  cfg.model = ctx.model(o.model, o.layers);
  cfg.model_name = o.model;
  cfg.seqlen = parse_size(o.seqlen, "--seqlen");
  cfg.batch = o.batch;
  cfg.steps = o.steps, cfg.warmup = o.warmup;
  cfg.master_weights = parse_master_weights(o.precision);
  cfg.adam = o.adam;
  cfg.seed = o.seed;
  cfg.mem_debug = o.mem_debug;
  cfg.checkpointing = o.checkpointing;
  cfg.loss_chunk = o.loss_chunk == "0" ? 0 : parse_size(o.loss_chunk, "--loss-chunk");
  cfg.autotune_gemm = !o.no_autotune;
  cfg.breakdown = o.breakdown;
  if (o.device < 0) throw UsageError("--device must not be negative");
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
    if (const Accelerator* a = catalog_entry(ctx, d.device_name)) cfg.peak_tflops = a->peak(Dtype::bf16).get();
    d.echo = echo;
    measure::TrainBenchmark b(cfg, d);
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
  throw WorkError("train: this binary was built without CUDA (nvcc was not found at build time)");
#endif
}

}  // namespace

void register_train(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<TrainOptions>();
  auto* cmd = app.add_subcommand("train", "Time training steps (forward, backward, AdamW) of a Llama-family model "
                                          "on our engine; one JSON record per step");
  cmd->add_option("--model", o->model, "Preset id or path to a Hugging Face config.json")->capture_default_str();
  cmd->add_option("--layers", o->layers, "Keep only the first N layers (0: all)")->capture_default_str();
  cmd->add_option("--seqlen", o->seqlen, "Tokens per sequence (k = 1024)")->capture_default_str();
  cmd->add_option("--batch", o->batch, "Sequences per step")->capture_default_str();
  cmd->add_option("--steps", o->steps, "Timed steps")->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Untimed steps before them (recorded with warmup: true)")->capture_default_str();
  cmd->add_option("--precision", o->precision,
                  "master: bf16 compute with fp32 master weights and AdamW state (DeepSpeed's bf16 mode); "
                  "bf16: bf16 weights and AdamW state")
      ->capture_default_str();
  cmd->add_option("--lr", o->adam.lr, "AdamW learning rate")->capture_default_str();
  cmd->add_option("--beta1", o->adam.beta1, "AdamW beta1")->capture_default_str();
  cmd->add_option("--beta2", o->adam.beta2, "AdamW beta2")->capture_default_str();
  cmd->add_option("--eps", o->adam.eps, "AdamW epsilon")->capture_default_str();
  cmd->add_option("--weight-decay", o->adam.weight_decay, "AdamW weight decay")->capture_default_str();
  cmd->add_option("--max-grad-norm", o->adam.max_grad_norm, "Clip gradients to this global norm (0: off)")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the initial weights and the synthetic tokens")->capture_default_str();
  cmd->add_flag("--mem-debug", o->mem_debug,
                "Record allocated / reserved / peak memory after forward, backward and step of the first step");
  cmd->add_flag("--checkpointing", o->checkpointing,
                "Activation checkpointing: keep each layer's input only, recompute the layer in backward");
  cmd->add_option("--loss-chunk", o->loss_chunk,
                  "Run lm_head + cross-entropy this many tokens at a time, never holding the whole logits "
                  "tensor (0: all at once)")
      ->capture_default_str();
  cmd->add_flag("--no-autotune", o->no_autotune, "Use cuBLASLt's first heuristic choice per GEMM shape, untimed");
  cmd->add_flag("--breakdown", o->breakdown,
                "After the timed steps, profile one more: time per kernel class (train_breakdown record)");
  cmd->add_option("--device", o->device, "GPU index")->capture_default_str();
  cmd->add_option("--out", o->out, "Records file (JSON lines, appended; default upgradebench-train-<date>.jsonl)");
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
