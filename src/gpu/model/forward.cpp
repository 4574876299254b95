// The forward pass: embedding, each decoder layer, the final norm (llama_passes.hpp). Names
// follow model/reference/llama_cpu.cpp.
#include "gpu/kernels/llama_ops.cuh"
#include "gpu/model/llama_passes.hpp"

namespace ub::gpu {

void LlamaPasses::forward() {
  const ShardPlan& P = b_.plan;
  const auto layers = static_cast<size_t>(m_.layers);
  if (dp_) dp_->use(P.embedding_unit());
  if (offload_) offload_->begin_step(), offload_->before_write(0);
  {
    auto p = op_scope("norm/elementwise", "embedding fwd", 2 * act_bytes(D_.H));
    embedding_forward(b_.tokens, b_.w(L_.embed), b_.x[0], D_.T, D_.H, s_);
  }
  if (offload_) offload_->written(0);
  if (dp_) dp_->release(P.embedding_unit());
  for (size_t l = 0; l < layers; ++l) {
    const bool offloaded_output = offload_ && l + 1 < layers;  // the next layer's input
    if (dp_) dp_->use(P.layer_unit(l));
    if (offloaded_output) offload_->before_write(l + 1);
    forward_layer(l, b_.activations(l));
    if (offloaded_output) offload_->written(l + 1);
    if (dp_) dp_->release(P.layer_unit(l));
  }
  // The head's use of its weights lasts until its backward is done (llama_passes.cpp).
  if (dp_) dp_->use(P.head_unit(), L_.lm_head == L_.embed ? P.embedding_unit() : DataParallel::kNone);
  auto p = op_scope("norm/elementwise", "rmsnorm fwd", 2 * act_bytes(D_.H));
  rmsnorm_forward(b_.x.back(), b_.w(L_.final_norm), b_.xf, b_.rstdf, D_.T, D_.H, m_.rms_norm_eps, s_);
}

void LlamaPasses::forward_layer(size_t l, const LayerActivations& A, bool recompute) {
  const LayerParams& lp = L_.layers[l];
  const int64_t T = D_.T, H = D_.H;
  {
    auto p = op_scope("norm/elementwise", "rmsnorm fwd", 2 * act_bytes(H));
    rmsnorm_forward(b_.x[l], b_.w(lp.attn_norm), A.xn1, A.rstd1, T, H, m_.rms_norm_eps, s_);
  }
  {
    DeviceArena::Scratch scratch(b_.arena);
    bf16* qkv = scratch.take<bf16>("qkv projection", static_cast<size_t>(T * D_.qkv_width()));
    {
      auto p = gemm_scope("qkv fwd", H, D_.qkv_width());
      gemm.forward(A.xn1, b_.w(lp.qkv), qkv, nullptr, T, H, D_.qkv_width());
    }
    if (m_.qk_norm) {
      auto p = op_scope("norm/elementwise", "qk-norm fwd", 3 * act_bytes(D_.q_width() + D_.kv_width()));
      qk_norm_forward(qkv, b_.w(lp.q_norm), b_.w(lp.k_norm), A.qk_raw, A.qk_rstd, T, D_.nq, D_.nk, D_.d,
                      m_.rms_norm_eps, s_);
    }
    auto p = op_scope("norm/elementwise", "rope fwd", 2 * act_bytes(D_.qkv_width()));
    rope_forward(qkv, b_.rope_cos, b_.rope_sin, A.q, A.k, A.v, T, D_.S, D_.nq, D_.nk, D_.d, s_);
  }
  if (!(recompute && opt_.selective)) {  // selective checkpointing kept the output and statistics
    ProfileScope p(profiler, "attention", "attention fwd", attn_fwd_flop_[l], 0, s_);
    attention.forward(layer_sdpa(l), {A.q, A.k, A.v, A.o, A.stats});
  }
  {
    auto p = gemm_scope("o fwd (+residual)", D_.q_width(), H);
    gemm.forward(A.o, b_.w(lp.o), A.a, b_.x[l], T, D_.q_width(), H);  // a = x + o_proj(o)
  }
  {
    auto p = op_scope("norm/elementwise", "rmsnorm fwd", 2 * act_bytes(H));
    rmsnorm_forward(A.a, b_.w(lp.mlp_norm), A.xn2, A.rstd2, T, H, m_.rms_norm_eps, s_);
  }
  mlp_forward(l, A, recompute);
}

}  // namespace ub::gpu
