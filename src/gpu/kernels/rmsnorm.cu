// RMSNorm forward and backward; see llama_ops.cuh. The hidden size is a multiple of 8
// (check_trainable), so rows are read and written 8 bf16 (16 bytes) at a time.
//   forward:  one warp per row (sum of squares by warp shuffles), 8 rows per block;
//   backward: dx the same way; dw = sum over rows of dy * x * rstd as a column reduction (each
//             thread owns 8 columns over a chunk of rows, then one atomic per column and chunk).
#include <cuda_bf16.h>

#include "gpu/check.hpp"
#include "gpu/kernels/bf16_pack.cuh"
#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/llama_ops.cuh"

namespace ub::gpu {

namespace {

using bf16 = __nv_bfloat16;
constexpr int kWarpsPerBlock = 8;
constexpr int kRowsPerChunk = 64;  // dw: rows summed by one thread before its atomics


__global__ void rmsnorm_forward_kernel(const bf16* x, const bf16* w, bf16* y, float* rstd, int64_t T, int64_t H,
                                       float eps) {
  const int lane = threadIdx.x & 31;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= T) return;
  const bf16* xr = x + row * H;
  float ss = 0;
  for (int64_t j = lane * 8; j < H; j += 32 * 8) {
    const Pack8 v = load8(xr + j);
#pragma unroll
    for (int q = 0; q < 8; ++q) ss += v.get(q) * v.get(q);
  }
  const float r = rsqrtf(warp_sum(ss) / static_cast<float>(H) + eps);
  if (lane == 0) rstd[row] = r;
  for (int64_t j = lane * 8; j < H; j += 32 * 8) {
    const Pack8 v = load8(xr + j), g = load8(w + j);
    Pack8 out;
#pragma unroll
    for (int q = 0; q < 8; ++q) out.set(q, g.get(q) * v.get(q) * r);
    store8(y + row * H + j, out);
  }
}

__global__ void rmsnorm_dx_kernel(const bf16* dy, const bf16* x, const bf16* w, const float* rstd, const bf16* dres,
                                  bf16* dx, int64_t T, int64_t H) {
  const int lane = threadIdx.x & 31;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= T) return;
  const float r = rstd[row];
  const bf16* dyr = dy + row * H;
  const bf16* xr = x + row * H;
  float dot = 0;
  for (int64_t j = lane * 8; j < H; j += 32 * 8) {
    const Pack8 g = load8(dyr + j), v = load8(xr + j), wv = load8(w + j);
#pragma unroll
    for (int q = 0; q < 8; ++q) dot += g.get(q) * wv.get(q) * v.get(q);
  }
  dot = warp_sum(dot) * r / static_cast<float>(H);
  for (int64_t j = lane * 8; j < H; j += 32 * 8) {
    const Pack8 g = load8(dyr + j), v = load8(xr + j), wv = load8(w + j);
    Pack8 res{};
    if (dres) res = load8(dres + row * H + j);
    Pack8 out;
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      float d = r * (g.get(q) * wv.get(q) - v.get(q) * r * dot);
      if (dres) d += res.get(q);
      out.set(q, d);
    }
    store8(dx + row * H + j, out);
  }
}

__global__ void rmsnorm_dw_kernel(const bf16* dy, const bf16* x, const float* rstd, float* dw, int64_t T, int64_t H) {
  const int64_t col = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 8;
  if (col >= H) return;
  const int64_t first = static_cast<int64_t>(blockIdx.y) * kRowsPerChunk;
  const int64_t last = min(first + kRowsPerChunk, T);
  float acc[8] = {};
  for (int64_t row = first; row < last; ++row) {
    const float r = rstd[row];
    const Pack8 g = load8(dy + row * H + col), v = load8(x + row * H + col);
#pragma unroll
    for (int q = 0; q < 8; ++q) acc[q] += g.get(q) * v.get(q) * r;
  }
#pragma unroll
  for (int q = 0; q < 8; ++q) atomicAdd(dw + col + q, acc[q]);
}

void require_multiple_of_8(int64_t H, const char* what) {
  if (H % 8 != 0) throw WorkError(std::string(what) + ": the hidden size must be a multiple of 8");
}

}  // namespace

void rmsnorm_forward(const void* x, const void* w, void* y, float* rstd, int64_t T, int64_t H, double eps,
                     cudaStream_t s) {
  require_multiple_of_8(H, "rmsnorm_forward");
  const auto blocks = static_cast<unsigned>((T + kWarpsPerBlock - 1) / kWarpsPerBlock);
  rmsnorm_forward_kernel<<<blocks, 32 * kWarpsPerBlock, 0, s>>>(static_cast<const bf16*>(x), static_cast<const bf16*>(w),
                                                                static_cast<bf16*>(y), rstd, T, H, static_cast<float>(eps));
  UB_CUDA_CHECK_LAUNCH();
}

void rmsnorm_backward(const void* dy, const void* x, const void* w, const float* rstd, const void* residual_grad,
                      void* dx, float* dw, int64_t T, int64_t H, cudaStream_t s) {
  require_multiple_of_8(H, "rmsnorm_backward");
  // dw first: dx may overwrite residual_grad, never dy or x.
  const dim3 grid(static_cast<unsigned>((H / 8 + 255) / 256), static_cast<unsigned>((T + kRowsPerChunk - 1) / kRowsPerChunk));
  rmsnorm_dw_kernel<<<grid, 256, 0, s>>>(static_cast<const bf16*>(dy), static_cast<const bf16*>(x), rstd, dw, T, H);
  UB_CUDA_CHECK_LAUNCH();
  const auto blocks = static_cast<unsigned>((T + kWarpsPerBlock - 1) / kWarpsPerBlock);
  rmsnorm_dx_kernel<<<blocks, 32 * kWarpsPerBlock, 0, s>>>(
      static_cast<const bf16*>(dy), static_cast<const bf16*>(x), static_cast<const bf16*>(w), rstd,
      static_cast<const bf16*>(residual_grad), static_cast<bf16*>(dx), T, H);
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
