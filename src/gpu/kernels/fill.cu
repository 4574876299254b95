// Random normal fill; see fill.cuh. Values from model/counter_rng.hpp (splitmix64 of
// (seed, index), Box-Muller).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp8.h>

#include "gpu/check.hpp"
#include "gpu/kernels/fill.cuh"
#include "model/counter_rng.hpp"

namespace ub::gpu {

namespace {

template <class T>
__global__ void fill_kernel(T* p, size_t n, uint64_t seed, float stddev) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    p[i] = T(normal_at(seed, i) * stddev);
  }
}

__global__ void fill_fp4_kernel(__nv_fp4x2_storage_t* p, size_t pairs, uint64_t seed, float stddev) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < pairs;
       i += size_t{gridDim.x} * blockDim.x) {
    const float2 v = make_float2(normal_at(seed, 2 * i) * stddev, normal_at(seed, 2 * i + 1) * stddev);
    p[i] = __nv_cvt_float2_to_fp4x2(v, __NV_E2M1, cudaRoundNearest);
  }
}

__global__ void fill_bytes_kernel(unsigned char* p, size_t n, unsigned char v) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    p[i] = v;
  }
}

unsigned grid_for(size_t n) {
  return static_cast<unsigned>(std::min<size_t>((n + 255) / 256, 65536));
}

}  // namespace

std::string_view to_string(Elem e) {
  switch (e) {
    case Elem::f32: return "f32";
    case Elem::f16: return "f16";
    case Elem::bf16: return "bf16";
    case Elem::e4m3: return "e4m3";
    case Elem::e5m2: return "e5m2";
    case Elem::e2m1: return "e2m1";
  }
  return "?";
}

void fill_normal(void* p, Elem e, size_t n, uint64_t seed, float stddev, cudaStream_t s) {
  if (n == 0) return;
  switch (e) {
    case Elem::f32: fill_kernel<<<grid_for(n), 256, 0, s>>>(static_cast<float*>(p), n, seed, stddev); break;
    case Elem::f16: fill_kernel<<<grid_for(n), 256, 0, s>>>(static_cast<__half*>(p), n, seed, stddev); break;
    case Elem::bf16: fill_kernel<<<grid_for(n), 256, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, seed, stddev); break;
    case Elem::e4m3: fill_kernel<<<grid_for(n), 256, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n, seed, stddev); break;
    case Elem::e5m2: fill_kernel<<<grid_for(n), 256, 0, s>>>(static_cast<__nv_fp8_e5m2*>(p), n, seed, stddev); break;
    case Elem::e2m1: {
      const size_t pairs = (n + 1) / 2;
      fill_fp4_kernel<<<grid_for(pairs), 256, 0, s>>>(static_cast<__nv_fp4x2_storage_t*>(p), pairs, seed, stddev);
      break;
    }
  }
  UB_CUDA_CHECK_LAUNCH();
}

void fill_constant_bytes(void* p, unsigned char byte, size_t bytes, cudaStream_t s) {
  if (bytes == 0) return;
  fill_bytes_kernel<<<grid_for(bytes), 256, 0, s>>>(static_cast<unsigned char*>(p), bytes, byte);
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
