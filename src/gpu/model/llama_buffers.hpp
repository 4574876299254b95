// Where every tensor of a training step lives: one arena (gpu/device_arena.hpp) planned once,
// before the first kernel runs, so the peak is known up front and the same every step.
//
// Persistent: parameters (fp32 master weights when kept, the bf16 compute copy), gradients (fp32
// with master weights, bf16 in pure bf16 as PyTorch's bf16 model; then the norm weights' and the
// shared-expert gates' gradients are also summed in a small fp32 buffer before their rounding), the AdamW moments,
// the token ids and their index, the rotary tables, the residual stream (or, with offloaded
// checkpoints, three slots for the layers' inputs and the last layer's output), every activation the
// backward pass reads (one set per layer, or one shared set with activation checkpointing, plus
// each layer's attention output and statistics with selective checkpointing), the final norm's
// output and the per-token loss. Scratch: the largest of the phases' temporaries (the
// projections before rotary, the logits of one loss chunk, one layer's backward gradients, an
// MLP tile), taken and given back by DeviceArena::Scratch scopes.
//
// With data parallelism the flat buffers follow the shard plan (model/shard_plan.hpp), by
// ZeRO stage (what each rank keeps whole, what only as its shard):
//
//   stage  bf16 weights          gradients                 master weights, moments
//   0      whole                 whole                     whole
//   1      whole                 whole (own slices valid)  shard
//   2      whole                 shard, + bucket slots     shard
//   3      shard + unit slots    shard, + bucket slots     shard
//
// Unit slots hold the units ZeRO-3 has gathered; bucket slots hold the gradients of buckets not
// yet reduce-scattered. With the optimizer offloaded, master weights, moments and the gradient
// shard are in host memory instead (gpu/model/host_optimizer.hpp) and small slice slots carry
// each bucket's reduced gradient on its way there. w(t) and g(t) say where a tensor's weights and
// gradient are now; the data-parallel layer moves them as it gathers units and takes slots.
#pragma once

#include <cstdint>
#include <vector>

#include "facts/model_shape.hpp"
#include "gpu/device_arena.hpp"
#include "gpu/tensor_view.hpp"
#include "model/shard_plan.hpp"

namespace ub::gpu {

struct EngineOptions;

// The sizes of one step: batch, sequence, tokens, and the model's widths.
struct StepDims {
  int64_t B = 0, S = 0, T = 0;  // sequences, tokens per sequence, tokens
  int64_t H = 0, I = 0, V = 0;  // hidden, intermediate, vocabulary
  int64_t nq = 0, nk = 0, d = 0;  // query heads, key/value heads, head dim
  int64_t chunk = 0;              // tokens per lm_head + loss chunk
  int64_t mlp_tile = 0;           // tokens per MLP tile (T when not tiled)
  StepDims(const ModelShape& m, const EngineOptions& o);
  int64_t q_width() const { return nq * d; }
  int64_t kv_width() const { return nk * d; }
  int64_t qkv_width() const { return q_width() + 2 * kv_width(); }
  bool mlp_tiled() const { return mlp_tile < T; }
  // Bytes of a bf16 activation of `width` per token, over the step's tokens.
  size_t activation_bytes(int64_t width) const { return static_cast<size_t>(T * width) * sizeof(bf16); }
};

// What one layer's backward pass reads. gu and h are null when the MLP is tiled (its backward
// recomputes them a tile at a time) or is a mixture of experts'; qk_raw and qk_rstd (the query and
// key heads before QK-norm, and their statistics) are null without QK-norm.
struct LayerActivations {
  bf16 *xn1, *q, *k, *v, *o, *a, *xn2, *gu, *h, *qk_raw;
  float *rstd1, *rstd2, *stats, *qk_rstd;
};

class LlamaBuffers {
 public:
  // Plans and allocates everything; throws OutOfMemory naming what did not fit.
  LlamaBuffers(const ModelShape& m, const ShardPlan& plan, const EngineOptions& o);
  LlamaBuffers(const LlamaBuffers&) = delete;
  LlamaBuffers& operator=(const LlamaBuffers&) = delete;

  // Zeroes the gradients, the moments, the weights and their padding (after allocation).
  void clear(cudaStream_t s) const;

  const ShardPlan& plan;
  const LlamaLayout& layout;
  const StepDims dims;
  const int zero;  // the ZeRO stage the buffers follow (0 without data parallelism)
  DeviceArena arena;

  float* master = nullptr;  // null in pure bf16 and when offloaded
  bf16* w16 = nullptr;      // whole, or the rank's shard (ZeRO-3)
  Fp32OrBf16 grads, moments1, moments2;  // whole or shard (table above); null where offloaded
  float* fp32_sums = nullptr;  // gradients summed in fp32 apart (ParamTensor::summed_in_fp32; pure bf16, ZeRO 2-3)
  std::vector<bf16*> unit_slots;      // ZeRO-3: gathered units (largest_unit elements each)
  std::vector<void*> bucket_slots;    // ZeRO 2-3: gradients of buckets (largest_bucket each)
  void* tied_embedding_grads = nullptr;  // ZeRO 2-3, tied embeddings: the embedding's, all backward long
  std::vector<void*> slice_slots;     // offloaded: reduced slices on their way to host memory
  int32_t *tokens = nullptr, *token_order = nullptr, *token_starts = nullptr;  // index_tokens's on the device
  float *rope_cos = nullptr, *rope_sin = nullptr;
  // Residual stream: x[0] embeddings, x[l + 1] output of layer l. With offloaded checkpoints the
  // layers' inputs x[0 .. layers - 1] point into checkpoint_slots while they are on the GPU (null
  // otherwise: gpu/model/checkpoint_offload.hpp moves them); the last layer's output has its own.
  std::vector<bf16*> x;
  std::vector<bf16*> checkpoint_slots;
  bf16* xf = nullptr;                  // final norm output
  float* rstdf = nullptr;
  bf16* dx = nullptr;                  // gradient of the residual stream, carried down the layers
  float* row_loss = nullptr;
  double *loss = nullptr, *norm_sq = nullptr;

  // Where each unit's weights and each bucket's gradients are now (first element of the unit or
  // bucket); fixed unless ZeRO-3 gathers units into slots or ZeRO 2-3 gives buckets slots.
  std::vector<bf16*> unit_weights;
  std::vector<void*> bucket_grads;

  Elem grad_elem() const { return grads.elem; }
  const bf16* w(size_t tensor) const;
  Fp32OrBf16 g(size_t tensor) const;
  // Where the gradient of a tensor summed in fp32 (a norm weight, a shared-expert gate) is summed:
  // the gradient itself, or its fp32 sum.
  float* summed_grad(size_t tensor) const;
  // The activations layer l's backward reads (the one shared set with checkpointing).
  LayerActivations activations(size_t l) const;

 private:
  std::vector<LayerActivations> acts_;  // one per layer, or one shared (checkpointing)
  std::vector<bf16*> kept_o_;           // selective checkpointing: per layer
  std::vector<float*> kept_stats_;
  std::vector<size_t> fp32_sum_offset_;  // per tensor index (tensors summed in fp32 only)
};

}  // namespace ub::gpu
