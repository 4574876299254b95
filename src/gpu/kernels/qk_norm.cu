// QK-norm (Qwen3) forward and backward; see llama_ops.cuh. Each query and each key head of a
// token's projections is RMS-normalised over its head_dim, a multiple of 8 up to 256: one warp per
// head, each lane 8 columns, read and written 16 bytes at a time.
//   forward:  in place in the projections, the heads before the norm copied out (the backward
//             pass reads them; the rotary embedding comes after, on the normalised heads);
//   backward: in place in the projections' gradient; the weights' gradients summed per lane in
//             registers over the heads its warp walks, then per block in shared memory, then one
//             atomic per column and block.
#include <cuda_bf16.h>

#include <algorithm>
#include <string>

#include "base/error.hpp"
#include "gpu/check.hpp"
#include "gpu/kernels/bf16_pack.cuh"
#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/llama_ops.cuh"
#include "gpu/kernels/sm_count.cuh"

namespace ub::gpu {

namespace {

using bf16 = __nv_bfloat16;
constexpr int kWarpsPerBlock = 8;
constexpr int64_t kMaxHeadDim = 256;

// Head i of the step's T * (nq + nk) query and key heads: token i / (nq + nk), and within the
// token's row of `width` its (i % (nq + nk))-th head of d, queries first, then keys.
__device__ __forceinline__ int64_t head_offset(int64_t i, int64_t n, int64_t d, int64_t width) {
  return (i / n) * width + (i % n) * d;
}

__global__ void qk_norm_forward_kernel(bf16* qkv, const bf16* qw, const bf16* kw, bf16* raw, float* rstd, int64_t heads,
                                       int64_t nq, int64_t nk, int64_t d, int64_t width, float eps) {
  const int lane = threadIdx.x & 31;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (i >= heads) return;  // the whole warp
  bf16* x = qkv + head_offset(i, nq + nk, d, width);
  const bf16* w = i % (nq + nk) < nq ? qw : kw;
  const int64_t col = lane * 8;
  const bool in = col < d;
  const Pack8 v = in ? load8(x + col) : Pack8{};
  float ss = 0;
#pragma unroll
  for (int q = 0; q < 8; ++q) ss += v.get(q) * v.get(q);
  const float r = rsqrtf(warp_sum(ss) / static_cast<float>(d) + eps);
  if (lane == 0) rstd[i] = r;
  if (!in) return;
  store8(raw + i * d + col, v);
  const Pack8 g = load8(w + col);
  Pack8 out;
#pragma unroll
  for (int q = 0; q < 8; ++q) out.set(q, g.get(q) * v.get(q) * r);
  store8(x + col, out);
}

__global__ void qk_norm_backward_kernel(bf16* dqkv, const bf16* raw, const bf16* qw, const bf16* kw, const float* rstd,
                                        float* dqw, float* dkw, int64_t heads, int64_t nq, int64_t nk, int64_t d,
                                        int64_t width) {
  __shared__ float sums[2][kMaxHeadDim];  // queries' weights, keys' weights
  for (int c = threadIdx.x; c < 2 * kMaxHeadDim; c += blockDim.x) sums[c / kMaxHeadDim][c % kMaxHeadDim] = 0;
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const int64_t col = lane * 8;
  const bool in = col < d;
  const Pack8 wq = in ? load8(qw + col) : Pack8{}, wk = in ? load8(kw + col) : Pack8{};
  float acc_q[8] = {}, acc_k[8] = {};
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5); i < heads; i += stride) {
    const bool key = i % (nq + nk) >= nq;
    bf16* dy = dqkv + head_offset(i, nq + nk, d, width);
    const Pack8 g = in ? load8(dy + col) : Pack8{}, v = in ? load8(raw + i * d + col) : Pack8{};
    const Pack8 w = key ? wk : wq;
    const float r = rstd[i];
    float dot = 0;
#pragma unroll
    for (int q = 0; q < 8; ++q) dot += g.get(q) * w.get(q) * v.get(q);
    dot = warp_sum(dot) * r / static_cast<float>(d);
    if (!in) continue;
    Pack8 out;
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      out.set(q, r * (g.get(q) * w.get(q) - v.get(q) * r * dot));
      const float dw = g.get(q) * v.get(q) * r;
      if (key) acc_k[q] += dw;
      else acc_q[q] += dw;
    }
    store8(dy + col, out);
  }
  if (in) {
#pragma unroll
    for (int q = 0; q < 8; ++q) atomicAdd(&sums[0][col + q], acc_q[q]), atomicAdd(&sums[1][col + q], acc_k[q]);
  }
  __syncthreads();
  for (int64_t c = threadIdx.x; c < d; c += blockDim.x) atomicAdd(dqw + c, sums[0][c]), atomicAdd(dkw + c, sums[1][c]);
}

void require_head_dim(int64_t d, const char* what) {
  if (d % 8 != 0 || d < 8 || d > kMaxHeadDim) {
    throw WorkError(std::string(what) + ": the head dimension must be a multiple of 8 up to 256");
  }
}

}  // namespace

void qk_norm_forward(bf16* qkv, const bf16* q_w, const bf16* k_w, bf16* raw, float* rstd, int64_t T, int64_t nq,
                     int64_t nk, int64_t d, double eps, cudaStream_t s) {
  require_head_dim(d, "qk_norm_forward");
  const int64_t heads = T * (nq + nk);
  if (heads <= 0) return;
  const auto blocks = static_cast<unsigned>((heads + kWarpsPerBlock - 1) / kWarpsPerBlock);
  qk_norm_forward_kernel<<<blocks, 32 * kWarpsPerBlock, 0, s>>>(qkv, q_w, k_w, raw, rstd, heads, nq, nk, d,
                                                                (nq + 2 * nk) * d, static_cast<float>(eps));
  UB_CUDA_CHECK_LAUNCH();
}

void qk_norm_backward(bf16* dqkv, const bf16* raw, const bf16* q_w, const bf16* k_w, const float* rstd, float* dq_w,
                      float* dk_w, int64_t T, int64_t nq, int64_t nk, int64_t d, cudaStream_t s) {
  require_head_dim(d, "qk_norm_backward");
  const int64_t heads = T * (nq + nk);
  if (heads <= 0) return;
  // One wave of blocks at most: each block ends with 2 d atomics.
  const int64_t blocks = std::min<int64_t>((heads + kWarpsPerBlock - 1) / kWarpsPerBlock, int64_t{8} * current_sm_count());
  qk_norm_backward_kernel<<<static_cast<unsigned>(blocks), 32 * kWarpsPerBlock, 0, s>>>(
      dqkv, raw, q_w, k_w, rstd, dq_w, dk_w, heads, nq, nk, d, (nq + 2 * nk) * d);
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
