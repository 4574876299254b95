// The training step's options; see train_options.hpp.
#include "cli/train_options.hpp"

#include "base/error.hpp"
#include "cli/arguments.hpp"

namespace ub::cli {

void TrainOptions::add_to(CLI::App& cmd, Parts parts) {
  TrainOptions& o = *this;
  auto workload = [&](CLI::Option* x) {
    declared_.push_back(x);
    return x->capture_default_str();
  };
  auto engine = [&](CLI::Option* x) {
    declared_.push_back(x);
    engine_.push_back(x);
    return x;
  };
  workload(cmd.add_option("--model", o.model, "Preset id or path to a Hugging Face config.json"));
  workload(cmd.add_option("--layers", o.layers, "Keep only the first N layers (0: all)"));
  if (parts.seqlen) workload(cmd.add_option("--seqlen", o.seqlen, "Tokens per sequence (k = 1024)"));
  workload(cmd.add_option("--batch", o.batch, "Sequences per step"));
  workload(cmd.add_option("--weights", o.weights,
                          "Start from these Hugging Face weights (a .safetensors file, or a folder save_pretrained "
                          "wrote) instead of a random initialisation"));
  workload(cmd.add_option("--tokens", o.tokens,
                          "Train on these token ids (a safetensors file of one integer tensor [sequences, seqlen]) "
                          "instead of synthetic ones"));

  if (parts.steps) engine(cmd.add_option("--steps", o.steps, "Timed steps"))->capture_default_str();
  engine(cmd.add_option("--warmup", o.warmup, "Untimed steps before them (recorded with warmup: true)"))
      ->capture_default_str();
  engine(cmd.add_option("--precision", o.precision,
                        "master: bf16 compute with fp32 master weights and AdamW state (DeepSpeed's bf16 mode); "
                        "bf16: bf16 weights and AdamW state"))
      ->capture_default_str();
  engine(cmd.add_option("--lr", o.adam.lr, "AdamW learning rate"))->capture_default_str();
  engine(cmd.add_option("--beta1", o.adam.beta1, "AdamW beta1"))->capture_default_str();
  engine(cmd.add_option("--beta2", o.adam.beta2, "AdamW beta2"))->capture_default_str();
  engine(cmd.add_option("--eps", o.adam.eps, "AdamW epsilon"))->capture_default_str();
  engine(cmd.add_option("--weight-decay", o.adam.weight_decay, "AdamW weight decay"))->capture_default_str();
  engine(cmd.add_option("--max-grad-norm", o.adam.max_grad_norm, "Clip gradients to this global norm (0: off)"))
      ->capture_default_str();
  engine(cmd.add_option("--seed", o.seed, "Seed of the initial weights and the synthetic tokens"))->capture_default_str();
  engine(cmd.add_flag("--mem-debug", o.mem_debug,
                      "Record allocated / reserved / peak memory after forward, backward and step of the first step"));
  engine(cmd.add_flag("--checkpointing", o.checkpointing,
                      "Activation checkpointing: keep each layer's input only, recompute the layer in backward"));
  engine(cmd.add_flag("--selective-checkpointing", o.selective,
                      "Checkpointing that keeps each layer's attention output and softmax statistics too: the "
                      "recompute skips attention and redoes the cheap rest (implies --checkpointing)"));
  engine(cmd.add_flag("--offload-checkpoints", o.offload_checkpoints,
                      "Checkpointing with the kept layer inputs in pinned host memory: copied out as the forward pass "
                      "writes them, back one layer ahead of the backward pass, on a copy stream (implies "
                      "--checkpointing; needs layers x seqlen x hidden x 2 bytes of host memory)"));
  engine(cmd.add_option("--mlp-tile", o.mlp_tile,
                        "Run each layer's MLP this many tokens at a time, never holding seqlen x intermediate "
                        "activations; the backward recomputes each tile's gate|up (0: the whole sequence at once)"))
      ->capture_default_str();
  engine(cmd.add_option("--loss-chunk", o.loss_chunk,
                        "Run lm_head + cross-entropy this many tokens at a time, never holding the whole logits "
                        "tensor (0: all at once)"))
      ->capture_default_str();
  engine(cmd.add_flag("--no-autotune", o.no_autotune, "Use cuBLASLt's first heuristic choice per GEMM shape, untimed"));
  engine(cmd.add_option("--device", o.device, "GPU index"))->capture_default_str();
  engine(cmd.add_option("--profile-steps", o.profile_steps, "How many steps a profile (--breakdown, decompose) takes"))
      ->capture_default_str();
  if (parts.breakdown) {
    engine(cmd.add_flag("--breakdown", o.breakdown,
                        "After the timed steps, profile more under CUPTI: time per kernel class and operation of the "
                        "median one (train_breakdown record) and the step's decomposition (decomposition record)"));
  }

  if (!parts.parallel) return;
  engine(cmd.add_option("--zero", o.zero,
                        "ZeRO stage across the ranks: 0 gradients all-reduced; 1 optimizer state sharded; 2 gradients "
                        "too; 3 parameters too, each layer gathered before use"))
      ->capture_default_str();
  engine(cmd.add_flag("--offload-optimizer", o.offload_optimizer,
                      "fp32 master weights and AdamW state of this rank's shard in host memory, AdamW on host threads "
                      "(DeepSpeed's CPU Adam; needs --zero 1, 2 or 3)"));
  engine(cmd.add_option("--bucket", o.bucket,
                        "Elements per communication bucket, whole tensors of one layer (k, M, G; 0: one bucket per "
                        "layer)"))
      ->capture_default_str();
  for (CLI::Option* x : add_job_options(cmd, o.job)) engine(x);
}

std::vector<std::string> TrainOptions::given_as_arguments(const std::set<std::string>& leave_out) const {
  std::vector<std::string> args;
  for (const CLI::Option* x : declared_) {
    if (x->count() == 0 || leave_out.count(x->get_name())) continue;
    if (x->get_expected_min() == 0) {  // a flag
      args.push_back(x->get_name());
      continue;
    }
    for (const std::string& v : x->results()) args.insert(args.end(), {x->get_name(), v});
  }
  return args;
}

TrainConfig train_config(Context& ctx, const TrainOptions& o, std::optional<int64_t> seqlen) {
  TrainConfig cfg;
  cfg.model = ctx.model(o.model, o.layers);
  cfg.model_name = o.model;
  cfg.seqlen = seqlen ? *seqlen : parse_size(o.seqlen, "--seqlen");
  cfg.batch = o.batch;
  cfg.steps = o.steps, cfg.warmup = o.warmup;
  cfg.master_weights = parse_master_weights(o.precision);
  cfg.adam = o.adam;
  cfg.seed = o.seed;
  cfg.weights = o.weights, cfg.tokens = o.tokens;
  cfg.mem_debug = o.mem_debug;
  cfg.checkpointing = o.checkpointing || o.selective || o.offload_checkpoints;
  cfg.selective = o.selective;
  cfg.offload_checkpoints = o.offload_checkpoints;
  cfg.mlp_tile = o.mlp_tile == "0" ? 0 : parse_size(o.mlp_tile, "--mlp-tile");
  cfg.loss_chunk = o.loss_chunk == "0" ? 0 : parse_size(o.loss_chunk, "--loss-chunk");
  cfg.zero = o.zero;
  cfg.offload_optimizer = o.offload_optimizer;
  cfg.bucket_elems = o.bucket == "0" ? 0 : parse_size(o.bucket, "--bucket");
  cfg.autotune_gemm = !o.no_autotune;
  cfg.breakdown = o.breakdown;
  cfg.profile_steps = o.profile_steps;
  o.job.validate();
  if (o.device < 0) throw UsageError("--device must not be negative");
  cfg.validate();
  return cfg;
}

}  // namespace ub::cli
