// Rotary embeddings fused with the split of the QKV projection into BSHD q, k, v (and the join
// back in backward); see llama_ops.cuh. One block per token.
#include <cuda_bf16.h>

#include "gpu/check.hpp"
#include "gpu/kernels/llama_ops.cuh"

namespace ub::gpu {

namespace {

using bf16 = __nv_bfloat16;

__global__ void rope_forward_kernel(const bf16* qkv, const float* cos, const float* sin, bf16* q, bf16* k, bf16* v,
                                    int64_t S, int64_t nq, int64_t nk, int64_t d) {
  const int64_t t = blockIdx.x, pos = t % S, half = d / 2, width = (nq + 2 * nk) * d;
  const bf16* row = qkv + t * width;
  for (int64_t j = threadIdx.x; j < (nq + nk) * half; j += blockDim.x) {
    const int64_t head = j / half, i = j % half;
    const float c = cos[pos * half + i], s = sin[pos * half + i];
    const bf16* src = row + head * d;
    const Pair<float> r = rope_rotate(__bfloat162float(src[i]), __bfloat162float(src[i + half]), c, s);
    bf16* dst = head < nq ? q + (t * nq + head) * d : k + (t * nk + head - nq) * d;
    dst[i] = __float2bfloat16(r.a);
    dst[i + half] = __float2bfloat16(r.b);
  }
  for (int64_t j = threadIdx.x; j < nk * d; j += blockDim.x) v[t * nk * d + j] = row[(nq + nk) * d + j];
}

__global__ void rope_backward_kernel(const bf16* dq, const bf16* dk, const bf16* dv, const float* cos, const float* sin,
                                     bf16* dqkv, int64_t S, int64_t nq, int64_t nk, int64_t d) {
  const int64_t t = blockIdx.x, pos = t % S, half = d / 2, width = (nq + 2 * nk) * d;
  bf16* row = dqkv + t * width;
  for (int64_t j = threadIdx.x; j < (nq + nk) * half; j += blockDim.x) {
    const int64_t head = j / half, i = j % half;
    const float c = cos[pos * half + i], s = sin[pos * half + i];
    const bf16* src = head < nq ? dq + (t * nq + head) * d : dk + (t * nk + head - nq) * d;
    const Pair<float> r = rope_rotate_backward(__bfloat162float(src[i]), __bfloat162float(src[i + half]), c, s);
    row[head * d + i] = __float2bfloat16(r.a);
    row[head * d + i + half] = __float2bfloat16(r.b);
  }
  for (int64_t j = threadIdx.x; j < nk * d; j += blockDim.x) row[(nq + nk) * d + j] = dv[t * nk * d + j];
}

}  // namespace

void rope_forward(const void* qkv, const float* cos, const float* sin, void* q, void* k, void* v, int64_t T, int64_t S,
                  int64_t nq, int64_t nk, int64_t d, cudaStream_t s) {
  rope_forward_kernel<<<static_cast<unsigned>(T), 256, 0, s>>>(static_cast<const bf16*>(qkv), cos, sin,
                                                              static_cast<bf16*>(q), static_cast<bf16*>(k),
                                                              static_cast<bf16*>(v), S, nq, nk, d);
  UB_CUDA_CHECK_LAUNCH();
}

void rope_backward(const void* dq, const void* dk, const void* dv, const float* cos, const float* sin, void* dqkv,
                   int64_t T, int64_t S, int64_t nq, int64_t nk, int64_t d, cudaStream_t s) {
  rope_backward_kernel<<<static_cast<unsigned>(T), 256, 0, s>>>(
      static_cast<const bf16*>(dq), static_cast<const bf16*>(dk), static_cast<const bf16*>(dv), cos, sin,
      static_cast<bf16*>(dqkv), S, nq, nk, d);
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
