// The training step's options; see train_options.hpp.
#include "cli/train_options.hpp"

#include "base/error.hpp"
#include "cli/arguments.hpp"

namespace ub::cli {

void add_workload_options(CLI::App& cmd, TrainOptions& o) {
  cmd.add_option("--model", o.model, "Preset id or path to a Hugging Face config.json")->capture_default_str();
  cmd.add_option("--layers", o.layers, "Keep only the first N layers (0: all)")->capture_default_str();
  cmd.add_option("--seqlen", o.seqlen, "Tokens per sequence (k = 1024)")->capture_default_str();
  cmd.add_option("--batch", o.batch, "Sequences per step")->capture_default_str();
}

std::vector<std::string> add_engine_options(CLI::App& cmd, TrainOptions& o, bool steps_option) {
  std::vector<std::string> names;
  auto opt = [&](CLI::Option* x) {
    names.push_back(x->get_name());
    return x;
  };
  if (steps_option) opt(cmd.add_option("--steps", o.steps, "Timed steps"))->capture_default_str();
  opt(cmd.add_option("--warmup", o.warmup, "Untimed steps before them (recorded with warmup: true)"))
      ->capture_default_str();
  opt(cmd.add_option("--precision", o.precision,
                     "master: bf16 compute with fp32 master weights and AdamW state (DeepSpeed's bf16 mode); "
                     "bf16: bf16 weights and AdamW state"))
      ->capture_default_str();
  opt(cmd.add_option("--lr", o.adam.lr, "AdamW learning rate"))->capture_default_str();
  opt(cmd.add_option("--beta1", o.adam.beta1, "AdamW beta1"))->capture_default_str();
  opt(cmd.add_option("--beta2", o.adam.beta2, "AdamW beta2"))->capture_default_str();
  opt(cmd.add_option("--eps", o.adam.eps, "AdamW epsilon"))->capture_default_str();
  opt(cmd.add_option("--weight-decay", o.adam.weight_decay, "AdamW weight decay"))->capture_default_str();
  opt(cmd.add_option("--max-grad-norm", o.adam.max_grad_norm, "Clip gradients to this global norm (0: off)"))
      ->capture_default_str();
  opt(cmd.add_option("--seed", o.seed, "Seed of the initial weights and the synthetic tokens"))->capture_default_str();
  opt(cmd.add_flag("--mem-debug", o.mem_debug,
                   "Record allocated / reserved / peak memory after forward, backward and step of the first step"));
  opt(cmd.add_flag("--checkpointing", o.checkpointing,
                   "Activation checkpointing: keep each layer's input only, recompute the layer in backward"));
  opt(cmd.add_flag("--selective-checkpointing", o.selective,
                   "Checkpointing that keeps each layer's attention output and softmax statistics too: the recompute "
                   "skips attention and redoes the cheap rest (implies --checkpointing)"));
  opt(cmd.add_option("--mlp-tile", o.mlp_tile,
                     "Run each layer's MLP this many tokens at a time, never holding seqlen x intermediate activations; "
                     "the backward recomputes each tile's gate|up (0: the whole sequence at once)"))
      ->capture_default_str();
  opt(cmd.add_option("--loss-chunk", o.loss_chunk,
                     "Run lm_head + cross-entropy this many tokens at a time, never holding the whole logits "
                     "tensor (0: all at once)"))
      ->capture_default_str();
  opt(cmd.add_flag("--no-autotune", o.no_autotune, "Use cuBLASLt's first heuristic choice per GEMM shape, untimed"));
  opt(cmd.add_option("--device", o.device, "GPU index"))->capture_default_str();
  return names;
}

void add_parallel_options(CLI::App& cmd, TrainOptions& o) {
  cmd.add_option("--zero", o.zero,
                 "ZeRO stage across the ranks: 0 gradients all-reduced; 1 optimizer state sharded; 2 gradients too; "
                 "3 parameters too, each layer gathered before use")
      ->capture_default_str();
  cmd.add_flag("--offload-optimizer", o.offload_optimizer,
               "fp32 master weights and AdamW state of this rank's shard in host memory, AdamW on host threads "
               "(DeepSpeed's CPU Adam; needs --zero 1, 2 or 3)");
  cmd.add_option("--bucket", o.bucket,
                 "Elements per communication bucket, whole tensors of one layer (k, M, G; 0: one bucket per layer)")
      ->capture_default_str();
  cmd.add_option("--gpus", o.gpus, "Without a launcher: run N ranks on this host (N or 'all'), one per GPU");
  cmd.add_option("--rendezvous-timeout", o.rendezvous_timeout_s, "Seconds the ranks wait for each other")
      ->capture_default_str();
}

TrainConfig train_config(Context& ctx, const TrainOptions& o) {
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
  cfg.checkpointing = o.checkpointing || o.selective;
  cfg.selective = o.selective;
  cfg.mlp_tile = o.mlp_tile == "0" ? 0 : parse_size(o.mlp_tile, "--mlp-tile");
  cfg.loss_chunk = o.loss_chunk == "0" ? 0 : parse_size(o.loss_chunk, "--loss-chunk");
  cfg.zero = o.zero;
  cfg.offload_optimizer = o.offload_optimizer;
  cfg.bucket_elems = o.bucket == "0" ? 0 : parse_size(o.bucket, "--bucket");
  if (!(o.rendezvous_timeout_s > 0)) throw UsageError("--rendezvous-timeout must be a positive number of seconds");
  cfg.autotune_gemm = !o.no_autotune;
  if (o.device < 0) throw UsageError("--device must not be negative");
  return cfg;
}

}  // namespace ub::cli
