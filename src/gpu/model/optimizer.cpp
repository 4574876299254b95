// The gradient norm and the optimizer step (llama_passes.hpp): the norm is summed on the side
// stream tensor by tensor as each gradient becomes final, overlapping the backward GEMMs; the
// side stream also zeroes what the backward pass accumulates into; then clipping and AdamW.
//
// On one GPU the update stays on the side stream, one launch per unit of the plan (embedding,
// each layer, the head: model/shard_plan.hpp) in the order the forward pass uses them, an event
// after each; the next forward pass waits for a unit's event just before using its weights, so
// the memory-bound update of the later units runs beside the compute-bound GEMMs of the earlier
// ones. Clipping needs the whole norm, so no update can start inside the backward pass. The
// kernel and its arguments per element are those of the one launch over everything, so the
// weights are the same bits. Nothing else reads or writes what the update touches before the
// next forward pass has waited for it: the next backward pass writes the gradients after that
// pass, and what the side stream zeroes it zeroes after the update, in stream order.
#include "base/error.hpp"
#include "gpu/kernels/llama_ops.cuh"
#include "gpu/model/llama_passes.hpp"

namespace ub::gpu {

// The gradients summed over tokens in fp32 (norm weights, shared-expert gates; the embedding's is
// written whole) are zeroed after the previous optimizer step has read them.
void LlamaPasses::zero_accumulated_gradients() {
  step_start_.record(s_);
  UB_CUDA_CHECK(cudaStreamWaitEvent(side_.get(), step_start_.get()));
  // The norm is zeroed on the stream that sums it and reads it in an overlapping update; with
  // data parallelism, on the main stream (forward_backward()).
  if (!dp_) UB_CUDA_CHECK(cudaMemsetAsync(b_.norm_sq, 0, sizeof(double), side_.get()));
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
  if (optimizer_overlapped()) {
    begins_[passes_ % 2].record(side_.get());  // the next step's time starts here (llama_engine.hpp)
    begin_recorded_ = true;
    for (size_t u = 0; u < b_.plan.units.size(); ++u) {
      const ShardUnit& unit = b_.plan.units[u];
      adamw_step(b_.master ? b_.master + unit.begin : nullptr, b_.w16 + unit.begin, b_.grads.at(unit.begin),
                 b_.moments1.at(unit.begin), b_.moments2.at(unit.begin), unit.size(), b_.norm_sq, opt_.adam, steps,
                 side_.get());
      updated_[u].record(side_.get());
    }
    pending_ = true;
    return;
  }
  UB_CUDA_CHECK(cudaStreamWaitEvent(s_, norm_done_.get()));  // the norm, summed during backward
  // Bytes: gradient read; moments read and written; weights read and written (bf16, plus fp32
  // master read and written).
  const auto n = static_cast<double>(dp_ ? b_.plan.shard : L_.total);
  const double state = static_cast<double>(b_.grads.element_bytes());
  const double bytes = n * (static_cast<double>(b_.grads.element_bytes()) + 4 * state + (opt_.master_weights ? 8 + 2 : 4));
  auto p = op_scope("optimizer", opt_.offload_optimizer ? "AdamW (host)" : "AdamW", bytes);
  if (dp_) {
    dp_->optimizer_step(steps);
    return;
  }
  adamw_step(b_.master, b_.w16, b_.grads, b_.moments1, b_.moments2, L_.total, b_.norm_sq, opt_.adam, steps, s_);
}

void LlamaPasses::await_update(size_t u) {
  if (pending_) UB_CUDA_CHECK(cudaStreamWaitEvent(s_, updated_[u].get()));
}

void LlamaPasses::await_norm() const { UB_CUDA_CHECK(cudaStreamWaitEvent(s_, norm_done_.get())); }

void LlamaPasses::join_side() const {
  side_done_.record(side_.get());
  UB_CUDA_CHECK(cudaStreamWaitEvent(s_, side_done_.get()));
}

double LlamaPasses::last_step_ms() const {
  if (passes_ == 0) throw WorkError("last_step_ms: no step was taken");
  UB_CUDA_CHECK(cudaEventSynchronize(norm_done_.get()));
  return norm_done_.since(begins_[(passes_ - 1) % 2]);
}

}  // namespace ub::gpu
