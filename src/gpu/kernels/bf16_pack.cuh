// Eight bf16 values moved as one 16-byte access: the element-wise training kernels read and
// write rows this way (row widths are multiples of 8, so every pack is aligned).
#pragma once

#include <cuda_bf16.h>

namespace ub::gpu {

struct Pack8 {
  uint4 raw;
  __device__ __forceinline__ float get(int q) const {
    return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(&raw)[q]);
  }
  __device__ __forceinline__ void set(int q, float v) { reinterpret_cast<__nv_bfloat16*>(&raw)[q] = __float2bfloat16(v); }
};
__device__ __forceinline__ Pack8 load8(const __nv_bfloat16* p) { return {*reinterpret_cast<const uint4*>(p)}; }
__device__ __forceinline__ void store8(__nv_bfloat16* p, const Pack8& v) { *reinterpret_cast<uint4*>(p) = v.raw; }

}  // namespace ub::gpu
