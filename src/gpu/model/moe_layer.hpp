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
// permuted rows and their pre-activations, the experts' outputs) in one of the layer object's
// `passes` slots: the engine keeps one slot per MoE layer when it keeps every layer's
// activations, and one when it recomputes each layer before going back through it
// (checkpointing). The backward pass's buffers are shared by all. The rows per expert are copied
// to the host once per forward pass (the grouped GEMM takes its sizes there): the host waits for
// that copy once per layer, while the gather of the rows runs on.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <span>
#include <utility>
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
  // Buffers for up to `max_tokens` tokens and `passes` forward passes kept at once; the GEMMs
  // are the engine's (their plans are shared).
  MoeLayer(const MoeDims& dims, int64_t max_tokens, LinearGemm& linear, GroupedGemm& grouped, int passes = 1);

  // out [T, H] = residual + the layer of x [T, H] (residual [T, H] or null), kept in slot `pass`.
  void forward(const bf16* x, const MoeLayerWeights& w, const bf16* residual, bf16* out, int64_t tokens, cudaStream_t s,
               int pass = 0);
  // dx [T, H] and the weights' gradients (written, or added to when `accumulate`) from dout, for
  // the x of the forward pass kept in slot `pass`.
  void backward(const bf16* x, const MoeLayerWeights& w, const bf16* dout, bf16* dx, const MoeLayerGrads& g,
                bool accumulate, cudaStream_t s, int pass = 0);

  int passes() const { return static_cast<int>(passes_.size()); }
  // Of the forward pass in slot `pass`: rows per expert (host), and on the device the
  // load-balancing loss (before its coefficient) and the routing, for tests.
  std::span<const int64_t> rows_per_expert(int pass = 0) const { return at(pass).rows; }
  const double* aux_loss(int pass = 0) const { return at(pass).aux.as<double>(); }
  const float* probs(int pass = 0) const { return at(pass).probs.as<float>(); }
  const int32_t* chosen(int pass = 0) const { return at(pass).chosen.as<int32_t>(); }
  const float* weights(int pass = 0) const { return at(pass).weights.as<float>(); }
  const int32_t* order(int pass = 0) const { return at(pass).order.as<int32_t>(); }
  const int32_t* offsets(int pass = 0) const { return at(pass).offsets.as<int32_t>(); }
  const bf16* gate_up_rows(int pass = 0) const { return at(pass).gu.as<bf16>(); }
  const bf16* expert_rows(int pass = 0) const { return at(pass).yp.as<bf16>(); }
  // The device memory its buffers hold.
  size_t device_bytes() const;

 private:
  // What one forward pass keeps for its backward pass.
  struct Pass {
    int64_t tokens = 0, rows_total = 0;
    std::vector<int64_t> rows;
    DeviceBuffer logits, probs, chosen, weights, counts, offsets, order, row_of_slot, aux, xp, gu, act, yp, shared_gu,
        shared_act, shared_out, shared_scale;
  };
  const Pass& at(int pass) const;
  Pass& at(int pass) { return const_cast<Pass&>(std::as_const(*this).at(pass)); }

  MoeDims d_;
  int64_t max_tokens_ = 0;
  LinearGemm& linear_;
  GroupedGemm& grouped_;
  PinnedBuffer host_counts_;
  Event counts_copied_;  // the rows per expert are on the host
  std::vector<Pass> passes_;
  // The forward pass's scratch, and the backward pass's buffers.
  DeviceBuffer permute_scratch_, aux_scratch_;
  DeviceBuffer dyp_, dweights_, dact_, dgu_, dlogits_, dx_router_, dshared_out_, dshared_act_, dshared_gu_,
      dx_shared_, dpre_;
};

}  // namespace ub::gpu
