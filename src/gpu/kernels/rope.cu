// Rotary embeddings fused with the split of the QKV projection into BSHD q, k, v (and the join
// back in backward); see llama_ops.cuh. One block per token. Head dims that are multiples of 16
// (Llama's 128) move eight rotary pairs per thread with 16-byte accesses; others one pair.
#include <cuda_bf16.h>

#include "gpu/check.hpp"
#include "gpu/kernels/bf16_pack.cuh"
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

// Rotates the eight pairs (src[i + q], src[i + half + q]) by the angles of cos / sin[i + q] into
// dst, with `rotate` (rope_rotate or its transpose).
template <class Rotate>
__device__ __forceinline__ void rotate8(const bf16* src, bf16* dst, const float* cos, const float* sin, int64_t i,
                                        int64_t half, Rotate rotate) {
  const Pack8 a = load8(src + i), b = load8(src + i + half);
  const float4 c0 = *reinterpret_cast<const float4*>(cos + i), c1 = *reinterpret_cast<const float4*>(cos + i + 4);
  const float4 s0 = *reinterpret_cast<const float4*>(sin + i), s1 = *reinterpret_cast<const float4*>(sin + i + 4);
  const float c[8] = {c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w};
  const float sn[8] = {s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w};
  Pack8 ra, rb;
#pragma unroll
  for (int q = 0; q < 8; ++q) {
    const Pair<float> r = rotate(a.get(q), b.get(q), c[q], sn[q]);
    ra.set(q, r.a);
    rb.set(q, r.b);
  }
  store8(dst + i, ra);
  store8(dst + i + half, rb);
}

__device__ __forceinline__ void copy8(const bf16* src, bf16* dst, int64_t n) {
  for (int64_t j = threadIdx.x * 8; j < n; j += blockDim.x * 8) store8(dst + j, load8(src + j));
}

__global__ void rope_forward_vec8(const bf16* qkv, const float* cos, const float* sin, bf16* q, bf16* k, bf16* v,
                                  int64_t S, int64_t nq, int64_t nk, int64_t d) {
  const int64_t t = blockIdx.x, half = d / 2, chunks = half / 8, width = (nq + 2 * nk) * d;
  const bf16* row = qkv + t * width;
  const float* c = cos + (t % S) * half;
  const float* s = sin + (t % S) * half;
  for (int64_t j = threadIdx.x; j < (nq + nk) * chunks; j += blockDim.x) {
    const int64_t head = j / chunks, i = j % chunks * 8;
    bf16* dst = head < nq ? q + (t * nq + head) * d : k + (t * nk + head - nq) * d;
    rotate8(row + head * d, dst, c, s, i, half, rope_rotate<float>);
  }
  copy8(row + (nq + nk) * d, v + t * nk * d, nk * d);
}

__global__ void rope_backward_vec8(const bf16* dq, const bf16* dk, const bf16* dv, const float* cos, const float* sin,
                                   bf16* dqkv, int64_t S, int64_t nq, int64_t nk, int64_t d) {
  const int64_t t = blockIdx.x, half = d / 2, chunks = half / 8, width = (nq + 2 * nk) * d;
  bf16* row = dqkv + t * width;
  const float* c = cos + (t % S) * half;
  const float* s = sin + (t % S) * half;
  for (int64_t j = threadIdx.x; j < (nq + nk) * chunks; j += blockDim.x) {
    const int64_t head = j / chunks, i = j % chunks * 8;
    const bf16* src = head < nq ? dq + (t * nq + head) * d : dk + (t * nk + head - nq) * d;
    rotate8(src, row + head * d, c, s, i, half, rope_rotate_backward<float>);
  }
  copy8(dv + t * nk * d, row + (nq + nk) * d, nk * d);
}

}  // namespace

void rope_forward(const bf16* qkv, const float* cos, const float* sin, bf16* q, bf16* k, bf16* v, int64_t T, int64_t S,
                  int64_t nq, int64_t nk, int64_t d, cudaStream_t s) {
  if (d % 16 == 0) {
    rope_forward_vec8<<<static_cast<unsigned>(T), 128, 0, s>>>(qkv, cos, sin, q, k, v, S, nq, nk, d);
  } else {
    rope_forward_kernel<<<static_cast<unsigned>(T), 256, 0, s>>>(qkv, cos, sin, q, k, v, S, nq, nk, d);
  }
  UB_CUDA_CHECK_LAUNCH();
}

void rope_backward(const bf16* dq, const bf16* dk, const bf16* dv, const float* cos, const float* sin, bf16* dqkv,
                   int64_t T, int64_t S, int64_t nq, int64_t nk, int64_t d, cudaStream_t s) {
  if (d % 16 == 0) {
    rope_backward_vec8<<<static_cast<unsigned>(T), 128, 0, s>>>(dq, dk, dv, cos, sin, dqkv, S, nq, nk, d);
  } else {
    rope_backward_kernel<<<static_cast<unsigned>(T), 256, 0, s>>>(dq, dk, dv, cos, sin, dqkv, S, nq, nk, d);
  }
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
