// The MLP of a decoder layer, x[l + 1] = a + down(silu(gate) * up) from the post-attention norm's
// output (llama_passes.hpp), whole or `mlp_tile` tokens at a time. The MLP is token-wise, so tiles
// compute exactly what the whole does; tiled, the seqlen x intermediate activations (gate|up,
// SwiGLU and their gradients: 6 x intermediate bf16 per token) exist one tile at a time, and the
// backward recomputes each tile's gate|up and SwiGLU before going back through it (one more
// gate|up GEMM, and none of the forward's down projection when checkpointing recomputes the
// layer). The weight gradients add up over tiles in the GEMM (fp32 with master weights).
#include <algorithm>

#include "gpu/kernels/llama_ops.cuh"
#include "gpu/model/llama_passes.hpp"

namespace ub::gpu {

void LlamaPasses::mlp_forward(size_t l, const LayerActivations& A, bool recompute) {
  const LayerParams& lp = L_.layers[l];
  if (lp.moe()) return moe_forward(l, A, recompute);
  const int64_t T = D_.T, H = D_.H, I = D_.I;
  if (!D_.mlp_tiled()) {
    {
      auto p = gemm_scope("gate_up fwd", H, 2 * I);
      gemm.forward(A.xn2, b_.w(lp.gate_up), A.gu, nullptr, T, H, 2 * I);
    }
    {
      auto p = op_scope("norm/elementwise", "swiglu fwd", act_bytes(3 * I));
      swiglu_forward(A.gu, A.h, T, I, s_);
    }
    if (recompute) return;  // the layer's output is the next layer's input, kept
    auto p = gemm_scope("down fwd (+residual)", I, H);
    gemm.forward(A.h, b_.w(lp.down), b_.x[l + 1], A.a, T, I, H);  // x = a + down_proj(h)
    return;
  }
  if (recompute) return;  // the tiled backward recomputes each tile
  for (int64_t r0 = 0; r0 < T; r0 += D_.mlp_tile) {
    const int64_t n = std::min(D_.mlp_tile, T - r0);
    DeviceArena::Scratch scratch(b_.arena);
    bf16* gu = scratch.take<bf16>("gate|up tile", static_cast<size_t>(n * 2 * I));
    bf16* h = scratch.take<bf16>("SwiGLU tile", static_cast<size_t>(n * I));
    {
      auto p = gemm_scope("gate_up fwd", H, 2 * I, n);
      gemm.forward(A.xn2 + r0 * H, b_.w(lp.gate_up), gu, nullptr, n, H, 2 * I);
    }
    {
      auto p = op_scope("norm/elementwise", "swiglu fwd", 3.0 * static_cast<double>(n * I) * sizeof(bf16));
      swiglu_forward(gu, h, n, I, s_);
    }
    auto p = gemm_scope("down fwd (+residual)", I, H, n);
    gemm.forward(h, b_.w(lp.down), b_.x[l + 1] + r0 * H, A.a + r0 * H, n, I, H);
  }
}

void LlamaPasses::mlp_backward(size_t l, const LayerActivations& A, bf16* dxn) {
  const LayerParams& lp = L_.layers[l];
  if (lp.moe()) return moe_backward(l, A, dxn);
  const int64_t T = D_.T, H = D_.H, I = D_.I;
  const bf16* dx = b_.dx;
  if (!D_.mlp_tiled()) {
    DeviceArena::Scratch scratch(b_.arena);
    bf16* dh = scratch.take<bf16>("SwiGLU output gradient", static_cast<size_t>(T * I));
    bf16* dgu = scratch.take<bf16>("gate|up gradient", static_cast<size_t>(T * 2 * I));
    {
      auto p = gemm_scope("down dgrad", H, I);
      gemm.dgrad(dx, b_.w(lp.down), dh, T, I, H);
    }
    {
      auto p = gemm_scope("down wgrad", I, H);
      gemm.wgrad(dx, A.h, b_.g(lp.down), T, I, H);
    }
    gradient_final(lp.down);
    {
      auto p = op_scope("norm/elementwise", "swiglu bwd", act_bytes(5 * I));
      swiglu_backward(dh, A.gu, dgu, T, I, s_);
    }
    {
      auto p = gemm_scope("gate_up dgrad", 2 * I, H);
      gemm.dgrad(dgu, b_.w(lp.gate_up), dxn, T, H, 2 * I);
    }
    {
      auto p = gemm_scope("gate_up wgrad", H, 2 * I);
      gemm.wgrad(dgu, A.xn2, b_.g(lp.gate_up), T, H, 2 * I);
    }
    gradient_final(lp.gate_up);
    return;
  }
  for (int64_t r0 = 0; r0 < T; r0 += D_.mlp_tile) {
    const int64_t n = std::min(D_.mlp_tile, T - r0);
    const bool add = r0 > 0;  // the weight gradients add up over tiles
    DeviceArena::Scratch scratch(b_.arena);
    bf16* gu = scratch.take<bf16>("gate|up tile", static_cast<size_t>(n * 2 * I));
    bf16* h = scratch.take<bf16>("SwiGLU tile", static_cast<size_t>(n * I));
    bf16* dh = scratch.take<bf16>("SwiGLU output gradient tile", static_cast<size_t>(n * I));
    bf16* dgu = scratch.take<bf16>("gate|up gradient tile", static_cast<size_t>(n * 2 * I));
    const bf16* xn2 = A.xn2 + r0 * H;
    {
      auto p = gemm_scope("gate_up fwd (tile recompute)", H, 2 * I, n);
      gemm.forward(xn2, b_.w(lp.gate_up), gu, nullptr, n, H, 2 * I);
    }
    {
      auto p = op_scope("norm/elementwise", "swiglu fwd", 3.0 * static_cast<double>(n * I) * sizeof(bf16));
      swiglu_forward(gu, h, n, I, s_);
    }
    {
      auto p = gemm_scope("down dgrad", H, I, n);
      gemm.dgrad(dx + r0 * H, b_.w(lp.down), dh, n, I, H);
    }
    {
      auto p = gemm_scope("down wgrad", I, H, n);
      gemm.wgrad(dx + r0 * H, h, b_.g(lp.down), n, I, H, add);
    }
    {
      auto p = op_scope("norm/elementwise", "swiglu bwd", 5.0 * static_cast<double>(n * I) * sizeof(bf16));
      swiglu_backward(dh, gu, dgu, n, I, s_);
    }
    {
      auto p = gemm_scope("gate_up dgrad", 2 * I, H, n);
      gemm.dgrad(dgu, b_.w(lp.gate_up), dxn + r0 * H, n, H, 2 * I);
    }
    auto p = gemm_scope("gate_up wgrad", H, 2 * I, n);
    gemm.wgrad(dgu, xn2, b_.g(lp.gate_up), n, H, 2 * I, add);
  }
  gradient_final(lp.down);
  gradient_final(lp.gate_up);
}

}  // namespace ub::gpu
