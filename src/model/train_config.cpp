// The training configuration's checks; see train_config.hpp.
#include "model/train_config.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "model/hf_checkpoint.hpp"
#include "model/llama_layout.hpp"

namespace ub {

void TrainConfig::validate() const {
  check_training_step(model, batch, seqlen, loss_chunk);
  check_step_options(step_options());
  if (bucket_elems < 0 || bucket_elems > (int64_t{1} << 40)) {
    throw UsageError(fmt::format("train: --bucket {} is out of range (0..2^40 elements; 0: one bucket per unit)", bucket_elems));
  }
  if (steps < 1 || steps > 100000) throw UsageError(fmt::format("train: --steps {} is out of range (1..100000)", steps));
  if (warmup < 0 || warmup > 100000) throw UsageError(fmt::format("train: --warmup {} is out of range (0..100000)", warmup));
  if (!(adam.lr >= 0 && adam.lr < 1)) throw UsageError(fmt::format("train: --lr {} is out of range [0, 1)", adam.lr));
  if (!(adam.beta1 >= 0 && adam.beta1 < 1 && adam.beta2 >= 0 && adam.beta2 < 1)) {
    throw UsageError("train: --beta1 and --beta2 must be within [0, 1)");
  }
  if (!(adam.eps > 0)) throw UsageError("train: --eps must be positive");
  if (!(adam.weight_decay >= 0)) throw UsageError("train: --weight-decay must not be negative");
  if (profile_steps < 1 || profile_steps > 1000) {
    throw UsageError(fmt::format("train: --profile-steps {} is out of range (1..1000)", profile_steps));
  }
  if (!(adam.max_grad_norm >= 0)) throw UsageError("train: --max-grad-norm must not be negative (0: no clipping)");
  // The files' names, shapes and token ids, before a GPU is touched (the weights' values are read
  // by the step itself).
  if (!weights.empty()) load_hf_weights(weights, model, llama_layout(model), WeightsRead::names_and_shapes);
  if (!tokens.empty()) load_token_ids(tokens, 0, batch * world, seqlen, model.vocab);
}

StepOptions TrainConfig::step_options() const {
  StepOptions o;
  o.zero = zero, o.offload_optimizer = offload_optimizer, o.master_weights = master_weights;
  o.checkpointing = checkpointing, o.selective = selective, o.offload_checkpoints = offload_checkpoints;
  o.mlp_tile = mlp_tile;
  return o;
}

}  // namespace ub
