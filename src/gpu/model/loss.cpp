// The head: lm_head, cross-entropy and their backward, `chunk` tokens at a time so the
// vocab x tokens logits are never whole (the fused cross-entropy of the ml-engineering guide's
// recipe), then the loss and the final norm's backward (llama_passes.hpp).
#include <algorithm>

#include "gpu/kernels/llama_ops.cuh"
#include "gpu/model/llama_passes.hpp"

namespace ub::gpu {

namespace {

// The logits of one chunk, widened to fp32 into `out` (tests).
void copy_logits(const bf16* logits, size_t n, float* out, cudaStream_t s) {
  std::vector<bf16> host(n);
  UB_CUDA_CHECK(cudaMemcpyAsync(host.data(), logits, n * sizeof(bf16), cudaMemcpyDeviceToHost, s));
  UB_CUDA_CHECK(cudaStreamSynchronize(s));
  std::transform(host.begin(), host.end(), out, [](bf16 v) { return __bfloat162float(v); });
}

}  // namespace

void LlamaPasses::loss_and_head_backward(const LlamaEngine::PhaseHook& phase, std::vector<float>* logits_out) {
  const int64_t T = D_.T, H = D_.H, V = D_.V, chunk = D_.chunk;
  const double predicted = static_cast<double>(D_.B * (D_.S - 1));  // rows with a next token
  if (logits_out) logits_out->resize(static_cast<size_t>(T * V));
  DeviceArena::Scratch scratch(b_.arena);
  bf16* dxf = scratch.take<bf16>("final norm gradient", static_cast<size_t>(T * H));
  bf16* logits = scratch.take<bf16>("logits", static_cast<size_t>(chunk * V));
  const Fp32OrBf16 d_head = b_.g(L_.lm_head);  // tied: the embedding's gradient too
  for (int64_t r0 = 0; r0 < T; r0 += chunk) {
    const int64_t n = std::min(chunk, T - r0);
    {
      auto p = gemm_scope("lm_head fwd", H, V, n);
      gemm.forward(b_.xf + r0 * H, b_.w(L_.lm_head), logits, nullptr, n, H, V);
    }
    if (logits_out) copy_logits(logits, static_cast<size_t>(n * V), logits_out->data() + r0 * V, s_);
    {
      auto p = op_scope("cross_entropy", "cross-entropy fwd+bwd", 3.0 * static_cast<double>(n * V) * 2);
      cross_entropy_forward_backward(logits, b_.tokens, b_.row_loss, r0, n, D_.S, V, predicted, s_);
    }
    if (phase && r0 == 0) phase("forward");  // the (first chunk's) logits gradient is held
    {
      auto p = gemm_scope("lm_head dgrad", V, H, n);
      gemm.dgrad(logits, b_.w(L_.lm_head), dxf + r0 * H, n, H, V);
    }
    auto p = gemm_scope("lm_head wgrad", H, V, n);
    gemm.wgrad(logits, b_.xf + r0 * H, d_head, n, H, V, r0 > 0);
  }
  {
    auto p = op_scope("cross_entropy", "loss sum", static_cast<double>(T) * 4);
    sum_loss(b_.row_loss, T, predicted, b_.loss, s_);
  }
  auto p = op_scope("norm/elementwise", "rmsnorm bwd", 3 * act_bytes(H));
  rmsnorm_backward(dxf, b_.x.back(), b_.w(L_.final_norm), b_.rstdf, nullptr, b_.dx, b_.summed_grad(L_.final_norm), T, H,
                   s_);
}

}  // namespace ub::gpu
