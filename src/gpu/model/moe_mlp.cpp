// A mixture-of-experts layer's MLP in the step (llama_passes.hpp): x[l + 1] = a + moe(xn2), the
// experts, router and shared experts of gpu/model/moe_layer.hpp. Without checkpointing the layer
// object keeps every MoE layer's pass (its routing, permuted rows and pre-activations) for the
// backward pass, as the dense layers keep theirs. With checkpointing it holds one layer's pass,
// and the backward pass runs a layer's forward again first (the recompute the step does anyway):
// the same arithmetic in the same order, its routing and rows the forward's, bit for bit.
#include "gpu/check.hpp"
#include "gpu/model/llama_passes.hpp"

namespace ub::gpu {

namespace {

// The FLOPs of an MoE layer's forward GEMMs over T tokens: the router, each token's top_k experts
// (gate|up, then down), the shared experts. The backward does twice that.
double moe_forward_flop(const MoeShape& e, int64_t T, int64_t H) {
  const auto t = static_cast<double>(T), h = static_cast<double>(H);
  const double routed = static_cast<double>(e.top_k) * 3 * h * static_cast<double>(e.intermediate);
  const double shared = static_cast<double>(e.shared_experts * e.shared_intermediate) * 3 * h;
  return 2 * t * (h * static_cast<double>(e.experts) + routed + shared);
}

}  // namespace

MoeLayerWeights LlamaPasses::moe_weights(const LayerParams& lp) const {
  auto w = [&](size_t t) { return t == kNoTensor ? nullptr : b_.w(t); };
  return {w(lp.router), w(lp.gate_up), w(lp.down), w(lp.shared_gate_up), w(lp.shared_down), w(lp.shared_expert_gate)};
}

void LlamaPasses::moe_forward(size_t l, const LayerActivations& A, bool recompute) {
  if (recompute) return;  // the backward pass runs it, right before going back through it
  const LayerParams& lp = L_.layers[l];
  {
    ProfileScope p(profiler, "moe", "moe fwd (router, routing, grouped experts, combine +residual)",
                   moe_forward_flop(*m_.moe, D_.T, D_.H), 0, s_);
    moe_->forward(A.xn2, moe_weights(lp), A.a, b_.x[l + 1], D_.T, s_, moe_pass_[l]);
  }
  moe_layer_ = static_cast<int64_t>(l);
  UB_CUDA_CHECK(cudaMemcpyAsync(aux_losses_.as<double>() + l, moe_->aux_loss(moe_pass_[l]), sizeof(double),
                                cudaMemcpyDeviceToDevice, s_));
  const std::span<const int64_t> rows = moe_->rows_per_expert(moe_pass_[l]);
  expert_rows_.insert(expert_rows_.end(), rows.begin(), rows.end());
}

void LlamaPasses::moe_backward(size_t l, const LayerActivations& A, bf16* dxn) {
  const LayerParams& lp = L_.layers[l];
  const MoeLayerWeights w = moe_weights(lp);
  if (moe_->passes() == 1 && moe_layer_ != static_cast<int64_t>(l)) {  // its pass is not kept: run it again
    DeviceArena::Scratch scratch(b_.arena);
    bf16* out = scratch.take<bf16>("MoE layer output (recomputed)", static_cast<size_t>(D_.T * D_.H));
    ProfileScope p(profiler, "moe", "moe fwd (recompute)", moe_forward_flop(*m_.moe, D_.T, D_.H), 0, s_);
    moe_->forward(A.xn2, w, A.a, out, D_.T, s_);
    moe_layer_ = static_cast<int64_t>(l);
  }
  auto g = [&](size_t t) { return t == kNoTensor ? Fp32OrBf16{} : b_.g(t); };
  MoeLayerGrads grads{g(lp.router), g(lp.gate_up), g(lp.down), g(lp.shared_gate_up), g(lp.shared_down), nullptr};
  // Summed over tokens in fp32 (the gradient itself with fp32 gradients, else its fp32 sum).
  if (lp.shared_expert_gate != kNoTensor) grads.shared_expert_gate = b_.summed_grad(lp.shared_expert_gate);
  {
    ProfileScope p(profiler, "moe", "moe bwd (experts, router, shared experts)", 2 * moe_forward_flop(*m_.moe, D_.T, D_.H),
                   0, s_);
    moe_->backward(A.xn2, w, b_.dx, dxn, grads, false, s_, moe_pass_[l]);
  }
  for (size_t t : {lp.router, lp.gate_up, lp.down, lp.shared_gate_up, lp.shared_down, lp.shared_expert_gate}) {
    if (t != kNoTensor) gradient_final(t);
  }
}

double LlamaPasses::aux_loss() const {
  if (!moe_ || !m_.moe->aux_loss || m_.moe->aux_loss_coef == 0) return 0;
  std::vector<double> per_layer(static_cast<size_t>(m_.layers));
  UB_CUDA_CHECK(cudaMemcpyAsync(per_layer.data(), aux_losses_.get(), per_layer.size() * sizeof(double),
                                cudaMemcpyDeviceToHost, s_));
  UB_CUDA_CHECK(cudaStreamSynchronize(s_));
  double sum = 0;
  for (size_t l = 0; l < per_layer.size(); ++l) {
    if (L_.layers[l].moe()) sum += m_.moe->aux_loss_coef * per_layer[l];
  }
  return sum;
}

}  // namespace ub::gpu
