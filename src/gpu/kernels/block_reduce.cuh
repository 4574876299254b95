// Warp and block reductions (sum, max) for the training kernels: warp shuffles, then one value
// per warp through shared memory. Every thread of the block receives the result.
#pragma once

#include <cuda_runtime.h>

namespace ub::gpu {

template <class T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// blockDim.x must be a multiple of 32, at most 1024.
template <class T>
__device__ T block_sum(T v) {
  __shared__ T part[32];
  __syncthreads();  // part may still be read by a previous call
  v = warp_sum(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) part[warp] = v;
  __syncthreads();
  const int warps = blockDim.x >> 5;
  T r = lane < warps ? part[lane] : T(0);
  return warp_sum(r);
}

__device__ __forceinline__ float block_max(float v) {
  __shared__ float part[32];
  __syncthreads();
  v = warp_max(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) part[warp] = v;
  __syncthreads();
  const int warps = blockDim.x >> 5;
  float r = lane < warps ? part[lane] : -INFINITY;
  return warp_max(r);
}

}  // namespace ub::gpu
