// Where every tensor of a training step lives: one arena (gpu/device_arena.hpp) planned once,
// before the first kernel runs, so the peak is known up front and the same every step.
//
// Persistent: parameters (fp32 master weights when kept, the bf16 compute copy), gradients (fp32
// with master weights, bf16 in pure bf16 as PyTorch's bf16 model; then the norm weights'
// gradients are also summed in a small fp32 buffer before their rounding), the AdamW moments,
// the token ids and their index, the rotary tables, the residual stream, every activation the
// backward pass reads (one set per layer, or one shared set with activation checkpointing), the
// final norm's output and the per-token loss. Scratch: the largest of the phases' temporaries
// (the projections before rotary, the logits of one loss chunk, one layer's backward gradients),
// taken and given back by DeviceArena::Scratch scopes.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model_shape.hpp"
#include "core/train/llama_layout.hpp"
#include "gpu/device_arena.hpp"
#include "gpu/tensor_view.hpp"

namespace ub::gpu {

struct EngineOptions;

// The sizes of one step: batch, sequence, tokens, and the model's widths.
struct StepDims {
  int64_t B = 0, S = 0, T = 0;  // sequences, tokens per sequence, tokens
  int64_t H = 0, I = 0, V = 0;  // hidden, intermediate, vocabulary
  int64_t nq = 0, nk = 0, d = 0;  // query heads, key/value heads, head dim
  int64_t chunk = 0;              // tokens per lm_head + loss chunk
  StepDims(const ModelShape& m, const EngineOptions& o);
  int64_t q_width() const { return nq * d; }
  int64_t kv_width() const { return nk * d; }
  int64_t qkv_width() const { return q_width() + 2 * kv_width(); }
  // Bytes of a bf16 activation of `width` per token, over the step's tokens.
  size_t activation_bytes(int64_t width) const { return static_cast<size_t>(T * width) * sizeof(bf16); }
};

// What one layer's backward pass reads.
struct LayerActivations {
  bf16 *xn1, *q, *k, *v, *o, *a, *xn2, *gu, *h;
  float *rstd1, *rstd2, *stats;
};

class LlamaBuffers {
 public:
  // Plans and allocates everything; throws OutOfMemory naming what did not fit.
  LlamaBuffers(const ModelShape& m, const LlamaLayout& layout, const EngineOptions& o);
  LlamaBuffers(const LlamaBuffers&) = delete;
  LlamaBuffers& operator=(const LlamaBuffers&) = delete;

  // Zeroes the gradients, the moments and the weights' padding (after allocation).
  void clear(cudaStream_t s) const;

  const LlamaLayout& layout;
  const StepDims dims;
  DeviceArena arena;

  float* master = nullptr;  // null in pure bf16
  bf16* w16 = nullptr;
  Fp32OrBf16 grads, moments1, moments2;
  float* norm_sums = nullptr;  // pure bf16: the norm weights' gradients summed in fp32
  int32_t *tokens = nullptr, *token_order = nullptr, *token_starts = nullptr;  // index_tokens's on the device
  float *rope_cos = nullptr, *rope_sin = nullptr;
  std::vector<bf16*> x;                // residual stream: x[0] embeddings, x[l + 1] output of layer l
  std::vector<LayerActivations> acts;  // one per layer, or one shared (checkpointing)
  bf16* xf = nullptr;                  // final norm output
  float* rstdf = nullptr;
  bf16* dx = nullptr;                  // gradient of the residual stream, carried down the layers
  float* row_loss = nullptr;
  double *loss = nullptr, *norm_sq = nullptr;

  const bf16* w(size_t tensor) const { return w16 + layout[tensor].offset; }
  Fp32OrBf16 g(size_t tensor) const { return grads.at(layout[tensor].offset); }
  // Where a norm weight's gradient is summed (fp32): the gradient itself, or its fp32 sum.
  float* norm_grad(size_t tensor) const;
  // The activations layer l's backward reads (the one shared set with checkpointing).
  const LayerActivations& activations(size_t l) const { return acts[acts.size() == 1 ? 0 : l]; }

 private:
  std::vector<size_t> norm_sum_offset_;  // per tensor index (norm tensors only)
};

}  // namespace ub::gpu
