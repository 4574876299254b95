// The backward pass through a decoder layer, and the embedding's gradient (llama_passes.hpp).
// Names follow model/reference/llama_cpu.cpp; dx carries the residual stream's gradient down.
#include "gpu/kernels/llama_ops.cuh"
#include "gpu/model/llama_passes.hpp"

namespace ub::gpu {

void LlamaPasses::backward_layer(size_t l, const LayerActivations& A) {
  const LayerParams& lp = L_.layers[l];
  const int64_t T = D_.T, H = D_.H, qw = D_.q_width(), kvw = D_.kv_width(), qkvw = D_.qkv_width();
  DeviceArena::Scratch scratch(b_.arena);
  bf16* dxn = scratch.take<bf16>("norm output gradient", static_cast<size_t>(T * H));
  bf16* dx = b_.dx;
  // MLP: x = a + down(silu(gate) * up) (mlp.cpp)
  mlp_backward(l, A, dxn);
  {
    auto p = op_scope("norm/elementwise", "rmsnorm bwd (+residual)", 4 * act_bytes(H));
    rmsnorm_backward(dxn, A.a, b_.w(lp.mlp_norm), A.rstd2, dx, dx, b_.summed_grad(lp.mlp_norm), T, H, s_);  // dx := da
  }
  gradient_final(lp.mlp_norm);
  // Attention: a = x + o_proj(attn(rope(q), rope(k), v))
  {
    DeviceArena::Scratch attention_scratch(b_.arena);
    auto take = [&](const char* what, int64_t width) {
      return attention_scratch.take<bf16>(what, static_cast<size_t>(T * width));
    };
    bf16* d_o = take("attention output gradient", qw);
    bf16* dq = take("query gradient", qw);
    bf16* dk = take("key gradient", kvw);
    bf16* dv = take("value gradient", kvw);
    bf16* dqkv = take("qkv projection gradient", qkvw);
    {
      auto p = gemm_scope("o dgrad", H, qw);
      gemm.dgrad(dx, b_.w(lp.o), d_o, T, qw, H);
    }
    {
      auto p = gemm_scope("o wgrad", qw, H);
      gemm.wgrad(dx, A.o, b_.g(lp.o), T, qw, H);
    }
    gradient_final(lp.o);
    {
      ProfileScope p(profiler, "attention", "attention bwd", 2.5 * attn_fwd_flop_[l], 0, s_);
      attention.backward(layer_sdpa(l), SdpaTensors{A.q, A.k, A.v, A.o, A.stats, d_o, dq, dk, dv});
    }
    {
      auto p = op_scope("norm/elementwise", "rope bwd", 2 * act_bytes(qkvw));
      rope_backward(dq, dk, dv, b_.rope_cos, b_.rope_sin, dqkv, T, D_.S, D_.nq, D_.nk, D_.d, s_);
    }
    if (m_.qk_norm) {
      auto p = op_scope("norm/elementwise", "qk-norm bwd", 3 * act_bytes(D_.q_width() + D_.kv_width()));
      qk_norm_backward(dqkv, A.qk_raw, b_.w(lp.q_norm), b_.w(lp.k_norm), A.qk_rstd, b_.summed_grad(lp.q_norm),
                       b_.summed_grad(lp.k_norm), T, D_.nq, D_.nk, D_.d, s_);
    }
    {
      auto p = gemm_scope("qkv dgrad", qkvw, H);
      gemm.dgrad(dqkv, b_.w(lp.qkv), dxn, T, H, qkvw);
    }
    {
      auto p = gemm_scope("qkv wgrad", H, qkvw);
      gemm.wgrad(dqkv, A.xn1, b_.g(lp.qkv), T, H, qkvw);
    }
    gradient_final(lp.qkv);
    if (m_.qk_norm) gradient_final(lp.q_norm), gradient_final(lp.k_norm);
  }
  {
    auto p = op_scope("norm/elementwise", "rmsnorm bwd (+residual)", 4 * act_bytes(H));
    rmsnorm_backward(dxn, b_.x[l], b_.w(lp.attn_norm), A.rstd1, dx, dx, b_.summed_grad(lp.attn_norm), T, H, s_);  // dx := dx_l
  }
  gradient_final(lp.attn_norm);
}

void LlamaPasses::embedding_backward() {
  const bool tied = L_.lm_head == L_.embed;  // the lm_head's gradient is already there: add to it
  const Fp32OrBf16 table = b_.g(L_.embed);
  const double table_bytes = static_cast<double>(D_.V * D_.H) * static_cast<double>(table.element_bytes());
  auto p = op_scope("norm/elementwise", "embedding bwd", act_bytes(D_.H) + (tied ? 2 : 1) * table_bytes);
  gpu::embedding_backward(b_.token_order, b_.token_starts, b_.dx, table, tied, D_.V, D_.H, s_);
}

}  // namespace ub::gpu
