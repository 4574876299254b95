// RMSNorm forward and backward; see llama_ops.cuh. Forward: one block per row. Backward: each
// block walks a chunk of rows, computing dx row by row and accumulating its share of dw in shared
// memory, then adds that share to dw with one atomic per column.
#include <cuda_bf16.h>

#include "gpu/check.hpp"
#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/llama_ops.cuh"

namespace ub::gpu {

namespace {

using bf16 = __nv_bfloat16;
constexpr int kThreads = 256;
constexpr int kRowsPerBlock = 32;

__global__ void rmsnorm_forward_kernel(const bf16* x, const bf16* w, bf16* y, float* rstd, int64_t H, float eps) {
  const int64_t row = blockIdx.x;
  const bf16* xr = x + row * H;
  float ss = 0;
  for (int64_t i = threadIdx.x; i < H; i += blockDim.x) {
    const float v = __bfloat162float(xr[i]);
    ss += v * v;
  }
  ss = block_sum(ss);
  const float r = rsqrtf(ss / static_cast<float>(H) + eps);
  if (threadIdx.x == 0) rstd[row] = r;
  for (int64_t i = threadIdx.x; i < H; i += blockDim.x) {
    y[row * H + i] = __float2bfloat16(__bfloat162float(w[i]) * __bfloat162float(xr[i]) * r);
  }
}

__global__ void rmsnorm_backward_kernel(const bf16* dy, const bf16* x, const bf16* w, const float* rstd,
                                        const bf16* dres, bf16* dx, float* dw, int64_t T, int64_t H) {
  extern __shared__ float dw_part[];
  for (int64_t i = threadIdx.x; i < H; i += blockDim.x) dw_part[i] = 0;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock;
  const int64_t last = min(first + kRowsPerBlock, T);
  for (int64_t row = first; row < last; ++row) {
    const float r = rstd[row];
    const bf16* dyr = dy + row * H;
    const bf16* xr = x + row * H;
    float dot = 0;
    for (int64_t i = threadIdx.x; i < H; i += blockDim.x) {
      dot += __bfloat162float(dyr[i]) * __bfloat162float(w[i]) * __bfloat162float(xr[i]);
    }
    dot = block_sum(dot) * r / static_cast<float>(H);
    for (int64_t i = threadIdx.x; i < H; i += blockDim.x) {
      const float g = __bfloat162float(dyr[i]), xhat = __bfloat162float(xr[i]) * r;
      float d = r * (g * __bfloat162float(w[i]) - xhat * dot);
      if (dres) d += __bfloat162float(dres[row * H + i]);
      dx[row * H + i] = __float2bfloat16(d);
      dw_part[i] += g * xhat;  // each thread owns its columns: no race
    }
  }
  __syncthreads();
  for (int64_t i = threadIdx.x; i < H; i += blockDim.x) atomicAdd(dw + i, dw_part[i]);
}

}  // namespace

void rmsnorm_forward(const void* x, const void* w, void* y, float* rstd, int64_t T, int64_t H, double eps,
                     cudaStream_t s) {
  rmsnorm_forward_kernel<<<static_cast<unsigned>(T), kThreads, 0, s>>>(
      static_cast<const bf16*>(x), static_cast<const bf16*>(w), static_cast<bf16*>(y), rstd, H, static_cast<float>(eps));
  UB_CUDA_CHECK_LAUNCH();
}

void rmsnorm_backward(const void* dy, const void* x, const void* w, const float* rstd, const void* residual_grad,
                      void* dx, float* dw, int64_t T, int64_t H, cudaStream_t s) {
  const size_t shared = static_cast<size_t>(H) * sizeof(float);
  if (shared > 48 * 1024) {
    UB_CUDA_CHECK(cudaFuncSetAttribute(rmsnorm_backward_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shared)));
  }
  const auto blocks = static_cast<unsigned>((T + kRowsPerBlock - 1) / kRowsPerBlock);
  rmsnorm_backward_kernel<<<blocks, kThreads, shared, s>>>(
      static_cast<const bf16*>(dy), static_cast<const bf16*>(x), static_cast<const bf16*>(w), rstd,
      static_cast<const bf16*>(residual_grad), static_cast<bf16*>(dx), dw, T, H);
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
