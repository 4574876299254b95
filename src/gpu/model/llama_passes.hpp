// The passes of a training step over the buffers (gpu/model/llama_buffers.hpp), in the order and
// with the formulas of the CPU reference (model/reference/llama_cpu.hpp), which the GPU tests hold
// them to; one file each:
//
//   forward.cpp    embedding, each decoder layer, the final norm; with activation checkpointing
//                  the same layer forward is the backward pass's recompute
//   loss.cpp       lm_head, cross-entropy and their backward, `chunk` tokens at a time (the logits
//                  are never whole), then the loss
//   backward.cpp   the layers in reverse (recomputed first when checkpointing), the embedding
//   optimizer.cpp  the gradient norm, summed on a side stream as each gradient becomes final,
//                  overlapping the backward GEMMs; clipping and AdamW
//   mlp.cpp        the MLP, whole or `mlp_tile` tokens at a time (forward, and backward with its
//                  gate|up and SwiGLU recomputed per tile)
//   moe_mlp.cpp    a mixture-of-experts layer's MLP (gpu/model/moe_layer.hpp), its forward again
//                  before its backward where the layer object holds another layer's pass
//
// With data parallelism (gpu/model/data_parallel.hpp) the passes tell the data-parallel layer
// when they use a unit's weights and when each gradient is final; it gathers, reduces and
// updates, and the norm is summed there, after the averaging. With offloaded checkpoints
// (gpu/model/checkpoint_offload.hpp) they say when a layer's input is written and when it is
// needed again, and it moves the input between host memory and the GPU.
//
// Kernels are gpu/kernels/llama_ops.cuh, GEMMs gpu/linear_gemm.hpp, attention gpu/attention.hpp.
// Every operation opens a profiling scope (gpu/step_profiler.hpp) naming its class and the
// FLOPs or bytes it does; without a profiler the scopes record nothing.
#pragma once

#include <cuda_runtime.h>

#include <optional>
#include <string>
#include <vector>

#include "facts/model_shape.hpp"
#include "gpu/attention.hpp"
#include "gpu/cuda_raii.hpp"
#include "gpu/grouped_gemm.hpp"
#include "gpu/linear_gemm.hpp"
#include "gpu/model/checkpoint_offload.hpp"
#include "gpu/model/data_parallel.hpp"
#include "gpu/model/llama_buffers.hpp"
#include "gpu/model/llama_engine.hpp"
#include "gpu/model/moe_layer.hpp"
#include "gpu/step_profiler.hpp"

namespace ub::gpu {

class LlamaPasses {
 public:
  LlamaPasses(const ModelShape& m, const EngineOptions& o, LlamaBuffers& b, cudaStream_t s, DataParallel* dp,
              CheckpointOffload* offload);

  void forward_backward(const LlamaEngine::PhaseHook& phase, std::vector<float>* logits);
  void optimizer_step();

  LinearGemm gemm;
  CudnnAttention attention;
  const SdpaDims sdpa;  // full causal attention over the step's sequences
  // Layer l's: within its window, where the model gives it one shorter than the sequence.
  SdpaDims layer_sdpa(size_t l) const;
  // The attention library's scratch, the largest over the layers' plans.
  size_t attention_scratch_bytes() const;
  StepProfiler* profiler = nullptr;
  int64_t steps = 0;
  // The load-balancing losses of the last forward pass's MoE layers, each times its coefficient,
  // summed (0 without them): the step's loss is the cross-entropy plus this.
  double aux_loss() const;
  // Of the last forward pass: each MoE layer's rows per expert, layer after layer (empty for a
  // dense model).
  const std::vector<int64_t>& expert_rows() const { return expert_rows_; }
  // The MoE layer's buffers (its own, beside the arena); 0 for a dense model.
  size_t moe_bytes() const { return moe_ ? moe_->device_bytes() : 0; }
  std::string expert_gemm() const { return grouped_ ? grouped_->library() : std::string(); }

 private:
  // forward.cpp; `recompute`: the forward again in the backward pass (checkpointing), which
  // skips what the backward does not read (kept attention, a tiled MLP, the layer's output)
  void forward();
  void forward_layer(size_t l, const LayerActivations& a, bool recompute = false);
  // mlp.cpp: x[l + 1] = a + down(silu(gate) * up) from xn2; its backward leaves dxn
  void mlp_forward(size_t l, const LayerActivations& a, bool recompute);
  void mlp_backward(size_t l, const LayerActivations& a, bf16* dxn);
  // moe_mlp.cpp: the same for a mixture-of-experts layer
  void moe_forward(size_t l, const LayerActivations& a, bool recompute);
  void moe_backward(size_t l, const LayerActivations& a, bf16* dxn);
  MoeLayerWeights moe_weights(const LayerParams& lp) const;
  // loss.cpp: the head's forward and backward, leaving the final norm's input gradient in dx.
  void loss_and_head_backward(const LlamaEngine::PhaseHook& phase, std::vector<float>* logits);
  // backward.cpp
  void backward_layer(size_t l, const LayerActivations& a);
  void embedding_backward();
  // optimizer.cpp
  void zero_accumulated_gradients();
  void gradient_final(size_t tensor);

  double gemm_flop(int64_t rows, int64_t in, int64_t out) const;
  // Profiling scopes: a GEMM over `rows` tokens (all when negative), attention, anything else.
  ProfileScope gemm_scope(const std::string& label, int64_t in, int64_t out, int64_t rows = -1) const;
  ProfileScope op_scope(const char* cls, const std::string& label, double bytes) const;
  // Bytes of one bf16 activation of `width` per token (the traffic estimate of the element-wise ops).
  double act_bytes(int64_t width) const { return static_cast<double>(b_.dims.activation_bytes(width)); }

  const ModelShape& m_;
  const EngineOptions& opt_;
  const LlamaLayout& L_;
  LlamaBuffers& b_;
  const StepDims& D_;
  cudaStream_t s_;
  DataParallel* dp_;  // null on one GPU without sharding
  CheckpointOffload* offload_;  // null unless the checkpoints are offloaded
  std::vector<double> attn_fwd_flop_;  // per layer (its window)
  // One MoE layer object serves every MoE layer. Without checkpointing it keeps each MoE layer's
  // pass in a slot of its own (moe_pass_[l]); with checkpointing it holds one layer's pass at a
  // time, moe_layer_ saying whose (-1: none), and the backward pass runs a layer's forward again.
  std::optional<GroupedGemm> grouped_;  // the experts' products: a cuBLAS handle of its own, for MoE models only
  std::optional<MoeLayer> moe_;
  std::vector<int> moe_pass_;  // per layer: its slot in moe_
  int64_t moe_layer_ = -1;
  DeviceBuffer aux_losses_;            // per layer, fp64, before the coefficient
  std::vector<int64_t> expert_rows_;
  // The gradient norm is summed on a side stream, tensor by tensor as each gradient becomes
  // final (memory traffic beside compute-bound work); the side stream also zeroes what the
  // backward pass accumulates into.
  Stream side_;
  Event grad_ready_, norm_done_, step_start_, grads_zeroed_;
};

}  // namespace ub::gpu
