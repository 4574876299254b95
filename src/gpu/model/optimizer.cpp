// The gradient norm and the optimizer step (llama_passes.hpp): the norm is summed on the side
// stream tensor by tensor as each gradient becomes final, overlapping the backward GEMMs; the
// side stream also zeroes what the backward pass accumulates into; then clipping and AdamW in one
// pass over the flat buffers.
#include "gpu/kernels/llama_ops.cuh"
#include "gpu/model/llama_passes.hpp"

namespace ub::gpu {

// The gradients summed over tokens in fp32 (norm weights, shared-expert gates; the embedding's is
// written whole) are zeroed after the previous optimizer step has read them.
void LlamaPasses::zero_accumulated_gradients() {
  step_start_.record(s_);
  UB_CUDA_CHECK(cudaStreamWaitEvent(side_.get(), step_start_.get()));
  for (size_t t = 0; t < L_.tensors.size(); ++t) {
    if (L_.tensors[t].summed_in_fp32) {
      UB_CUDA_CHECK(cudaMemsetAsync(b_.summed_grad(t), 0, L_[t].count() * sizeof(float), side_.get()));
    }
  }
  grads_zeroed_.record(side_.get());
}

// Tensor `t`'s gradient is final on the main stream: an fp32 sum (a norm weight's, a shared-expert
// gate's) goes to its place first; then the data-parallel layer takes it, or its squares go into the norm on the side.
void LlamaPasses::gradient_final(size_t t) {
  const Fp32OrBf16 g = b_.g(t);
  const auto count = static_cast<double>(L_[t].count());
  if (b_.fp32_sums && L_[t].summed_in_fp32) {
    auto p = op_scope("norm/elementwise", "norm gradient to its bucket", count * static_cast<double>(4 + g.element_bytes()));
    if (g.is_bf16()) {
      cast_to_bf16(b_.summed_grad(t), static_cast<bf16*>(g.data), L_[t].count(), s_);
    } else {
      UB_CUDA_CHECK(cudaMemcpyAsync(g.data, b_.summed_grad(t), L_[t].count() * sizeof(float), cudaMemcpyDeviceToDevice, s_));
    }
  }
  if (dp_) {
    dp_->gradient_final(t);
    return;
  }
  grad_ready_.record(s_);
  UB_CUDA_CHECK(cudaStreamWaitEvent(side_.get(), grad_ready_.get()));
  const size_t padded = (L_[t].count() + kParamAlign - 1) / kParamAlign * kParamAlign;  // zeros beyond
  auto p = op_scope("optimizer", "gradient norm (side stream)", count * static_cast<double>(g.element_bytes()));
  accumulate_squares(g, padded, b_.norm_sq, side_.get());
}

void LlamaPasses::optimizer_step() {
  ++steps;
  const auto n = static_cast<double>(dp_ ? b_.plan.shard : L_.total);
  UB_CUDA_CHECK(cudaStreamWaitEvent(s_, norm_done_.get()));  // the norm, summed during backward
  // Bytes: gradient read; moments read and written; weights read and written (bf16, plus fp32
  // master read and written).
  const double state = static_cast<double>(b_.grads.element_bytes());
  const double bytes = n * (static_cast<double>(b_.grads.element_bytes()) + 4 * state + (opt_.master_weights ? 8 + 2 : 4));
  auto p = op_scope("optimizer", opt_.offload_optimizer ? "AdamW (host)" : "AdamW", bytes);
  if (dp_) {
    dp_->optimizer_step(steps);
    return;
  }
  adamw_step(b_.master, b_.w16, b_.grads, b_.moments1, b_.moments2, L_.total, b_.norm_sq, opt_.adam, steps, s_);
}

}  // namespace ub::gpu
