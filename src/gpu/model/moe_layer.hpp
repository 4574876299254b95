// A mixture-of-experts MLP layer on the GPU, forward and backward, dropless: the router (a linear
// layer through cuBLASLt), routing and the permutation of tokens by expert (gpu/kernels/
// moe_ops.cuh), the experts' SwiGLU MLPs as grouped GEMMs (gpu/grouped_gemm.hpp) over the
// permuted rows, the weighted un-permute, optional shared experts (with Qwen2-MoE's sigmoid gate)
// and the load-balancing loss. The formulas, and the order of rows, are
// model/reference/moe_cpu.hpp's: the reference this layer is tested against.
//
// Weights as transformers 5 stores a sparse MoE block, bf16, row-major: router [E, H], the
// experts' gate and up projections stacked [E, 2I, H] (gate rows first), down [E, H, I]; the
// shared experts' gate|up [2Is, H] and down [H, Is]; the shared-expert gate [H].
//
// The forward pass keeps what the backward pass reads (logits, scores, the permutation, the
// permuted rows and their pre-activations, the experts' outputs): a layer object holds one
// layer's pass at a time, as the engine's recompute does. Its rows per expert are copied to the
// host once per forward pass (the grouped GEMM takes its sizes there): one synchronisation of the
// stream per layer.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <span>
#include <vector>

#include "gpu/cuda_raii.hpp"
#include "gpu/grouped_gemm.hpp"
#include "gpu/linear_gemm.hpp"
#include "gpu/pinned_buffer.hpp"
#include "gpu/tensor_view.hpp"

namespace ub::gpu {

struct MoeDims {
  int64_t hidden = 0, experts = 0, top_k = 0, intermediate = 0;
  int64_t shared_intermediate = 0;  // summed width of the shared experts; 0: none
  bool sigmoid = false;             // the router's scores: sigmoid, else softmax
  bool normalize = false;           // the top-k weights divided by their sum
  bool shared_expert_gate = false;  // Qwen2-MoE's sigmoid gate on the shared experts' output
  double aux_coef = 0.0;            // the load-balancing loss's coefficient in the backward pass
};

struct MoeLayerWeights {
  const bf16* router = nullptr;
  const bf16* gate_up = nullptr;
  const bf16* down = nullptr;
  const bf16* shared_gate_up = nullptr;
  const bf16* shared_down = nullptr;
  const bf16* shared_expert_gate = nullptr;
};

struct MoeLayerGrads {
  Fp32OrBf16 router, gate_up, down, shared_gate_up, shared_down;
  float* shared_expert_gate = nullptr;  // fp32 [H]
};

class MoeLayer {
 public:
  // Buffers for up to `max_tokens` tokens; the GEMMs are the engine's (their plans are shared).
  MoeLayer(const MoeDims& dims, int64_t max_tokens, LinearGemm& linear, GroupedGemm& grouped);

  // out [T, H] = residual + the layer of x [T, H] (residual [T, H] or null).
  void forward(const bf16* x, const MoeLayerWeights& w, const bf16* residual, bf16* out, int64_t tokens, cudaStream_t s);
  // dx [T, H] and the weights' gradients (written, or added to when `accumulate`) from dout, for
  // the x of the last forward pass.
  void backward(const bf16* x, const MoeLayerWeights& w, const bf16* dout, bf16* dx, const MoeLayerGrads& g,
                bool accumulate, cudaStream_t s);

  // Of the last forward pass: rows per expert (host), and on the device the load-balancing loss
  // (before its coefficient) and the routing, for tests.
  std::span<const int64_t> rows_per_expert() const { return rows_; }
  const double* aux_loss() const { return aux_.as<double>(); }
  const float* probs() const { return probs_.as<float>(); }
  const int32_t* chosen() const { return chosen_.as<int32_t>(); }
  const float* weights() const { return weights_.as<float>(); }
  const int32_t* order() const { return order_.as<int32_t>(); }
  const int32_t* offsets() const { return offsets_.as<int32_t>(); }
  const bf16* gate_up_rows() const { return gu_.as<bf16>(); }
  const bf16* expert_rows() const { return yp_.as<bf16>(); }
  // The device memory its buffers hold.
  size_t device_bytes() const;

 private:
  MoeDims d_;
  int64_t max_tokens_ = 0, tokens_ = 0, rows_total_ = 0;
  LinearGemm& linear_;
  GroupedGemm& grouped_;
  std::vector<int64_t> rows_;
  PinnedBuffer host_counts_;
  // Forward state.
  DeviceBuffer logits_, probs_, chosen_, weights_, counts_, offsets_, order_, row_of_slot_, permute_scratch_,
      aux_scratch_, aux_, xp_, gu_, act_, yp_, shared_gu_, shared_act_, shared_out_, shared_scale_;
  // Backward.
  DeviceBuffer dyp_, dweights_, dact_, dgu_, dlogits_, dx_router_, dshared_out_, dshared_act_, dshared_gu_,
      dx_shared_, dpre_;
};

}  // namespace ub::gpu
