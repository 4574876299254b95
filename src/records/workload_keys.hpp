// The configuration keys that say which workload a training run measured, beside its model,
// depth and batch: the levers that change a GPU's work or memory (the GPUs sharing the job,
// recompute, sharding, moving state to the host) and what the step computes in. Points of two
// workloads in one file would be fitted as one, and a speedup across a lever is the lever's as
// much as the GPU's: the reader of our records, the reader of benchmark.py's logs, `sweep
// --resume` and `compare` all hold runs to these keys, listed here once.
#pragma once

#include <array>
#include <string_view>

namespace ub {

// Our records' context, as records/train_records.cpp writes it.
inline constexpr std::array<const char*, 6> kOurLeverKeys = {
    "activation_checkpointing", "checkpointing_kept", "offload_checkpoints", "zero_stage", "offload_optimizer",
    "world_size"};
// Older names of the same levers, still read.
inline constexpr std::array<const char*, 3> kOurFormerLeverKeys = {"checkpointing", "selective_checkpointing", "zero"};
// The step's arithmetic: fp32 master weights or not, the chunked loss and the MLP tiles. (The
// context's "precision" describes the first in words, which builds have reworded.)
inline constexpr std::array<const char*, 3> kOurStepKeys = {"master_weights", "loss_chunk", "mlp_tile"};

// The model's shape as our context records give it beside its name: two runs that differ in one
// ran two models, whatever the name (one config.json path on two machines).
inline constexpr std::array<const char*, 8> kOurModelShapeKeys = {
    "hidden", "intermediate", "heads", "kv_heads", "head_dim", "vocab", "config_layers", "tied_embeddings"};

// What a context record that leaves one of those keys out ran (written before the key was, or by
// hand), as JSON text: no recompute, sharding, offloading, tiles or chunks, one GPU; nullptr for a
// key with no default (master_weights, checkpointing_kept).
inline const char* our_key_default(std::string_view key) {
  if (key == "activation_checkpointing" || key == "offload_checkpoints" || key == "offload_optimizer" ||
      key == "checkpointing" || key == "selective_checkpointing") {
    return "false";
  }
  if (key == "zero_stage" || key == "zero" || key == "mlp_tile" || key == "loss_chunk") return "0";
  if (key == "world_size") return "1";
  return nullptr;
}

// benchmark.py's log: its levers (the world size, gradient checkpointing, ZeRO stage, the
// offloaded optimizer) and its step's kernels (Liger, the attention backend).
inline constexpr std::array<const char*, 4> kBenchmarkPyLeverKeys = {"world_size", "gc", "zero", "offload_optim"};
inline constexpr std::array<const char*, 2> kBenchmarkPyStepKeys = {"liger", "attn_backend"};

}  // namespace ub
