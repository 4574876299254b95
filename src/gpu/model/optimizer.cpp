// The gradient norm and the optimizer step (llama_passes.hpp): the norm is summed on the side
// stream tensor by tensor as each gradient becomes final, overlapping the backward GEMMs; the
// side stream also zeroes what the backward pass accumulates into; then clipping and AdamW in one
// pass over the flat buffers.
#include "gpu/kernels/llama_ops.cuh"
#include "gpu/model/llama_passes.hpp"

namespace ub::gpu {

// The norm weights' gradients are summed over tokens (the embedding's is written whole), after
// the previous optimizer step has read them.
void LlamaPasses::zero_accumulated_gradients() {
  step_start_.record(s_);
  UB_CUDA_CHECK(cudaStreamWaitEvent(side_.get(), step_start_.get()));
  for (size_t t = 0; t < L_.tensors.size(); ++t) {
    if (L_.tensors[t].is_norm) UB_CUDA_CHECK(cudaMemsetAsync(b_.norm_grad(t), 0, L_[t].count() * sizeof(float), side_.get()));
  }
  grads_zeroed_.record(side_.get());
}

// Tensor `t`'s gradient is final on the main stream: add its squares to the norm, on the side.
void LlamaPasses::gradient_final(size_t t) {
  const Fp32OrBf16 g = b_.g(t);
  const auto count = static_cast<double>(L_[t].count());
  if (g.is_bf16() && L_[t].is_norm) {
    auto p = op_scope("norm/elementwise", "norm gradient to bf16", count * (4 + 2));
    cast_to_bf16(b_.norm_grad(t), static_cast<bf16*>(g.data), L_[t].count(), s_);
  }
  grad_ready_.record(s_);
  UB_CUDA_CHECK(cudaStreamWaitEvent(side_.get(), grad_ready_.get()));
  const size_t padded = (L_[t].count() + kParamAlign - 1) / kParamAlign * kParamAlign;  // zeros beyond
  auto p = op_scope("optimizer", "gradient norm (side stream)", count * static_cast<double>(g.element_bytes()));
  accumulate_squares(g, padded, b_.norm_sq, side_.get());
}

void LlamaPasses::optimizer_step() {
  ++steps;
  const auto n = static_cast<double>(L_.total);
  UB_CUDA_CHECK(cudaStreamWaitEvent(s_, norm_done_.get()));  // the norm, summed during backward
  // Bytes: gradient read; moments read and written; weights read and written (bf16, plus fp32
  // master read and written).
  const double state = static_cast<double>(b_.moments1.element_bytes());
  const double bytes = n * (static_cast<double>(b_.grads.element_bytes()) + 4 * state + (b_.master ? 8 + 2 : 4));
  auto p = op_scope("optimizer", "AdamW", bytes);
  adamw_step(b_.master, b_.w16, b_.grads, b_.moments1, b_.moments2, L_.total, b_.norm_sq, opt_.adam, steps, s_);
}

}  // namespace ub::gpu
