// Sampled GEMM reference; see gemm_check.cuh. One block per sample; each thread accumulates a
// strided slice of k in double, then the block reduces through shared memory.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp8.h>

#include "gpu/check.hpp"
#include "gpu/kernels/gemm_check.cuh"

namespace ub::gpu {

namespace {

__device__ __forceinline__ double load(const void* p, Elem e, int64_t i) {
  switch (e) {
    case Elem::f32: return static_cast<const float*>(p)[i];
    case Elem::f16: return __half2float(static_cast<const __half*>(p)[i]);
    case Elem::bf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case Elem::e4m3: return static_cast<float>(static_cast<const __nv_fp8_e4m3*>(p)[i]);
    case Elem::e5m2: return static_cast<float>(static_cast<const __nv_fp8_e5m2*>(p)[i]);
    case Elem::e2m1: {
      const unsigned char byte = static_cast<const unsigned char*>(p)[i / 2];
      __nv_fp4_e2m1 v;
      v.__x = static_cast<__nv_fp4_storage_t>((i % 2) ? (byte >> 4) : (byte & 0xF));
      return static_cast<float>(v);
    }
  }
  return 0;
}

constexpr int kThreads = 256;

__global__ void reference_kernel(const void* a, const void* b, Elem in, const void* c, Elem out_elem,
                                 int64_t m, int64_t k, const int64_t* rows, const int64_t* cols,
                                 GemmSampleResult* out) {
  const int64_t i = rows[blockIdx.x], j = cols[blockIdx.x];
  double sum = 0, abs_sum = 0;
  for (int64_t kk = threadIdx.x; kk < k; kk += kThreads) {
    const double p = load(a, in, i * k + kk) * load(b, in, j * k + kk);
    sum += p;
    abs_sum += fabs(p);
  }
  __shared__ double s_sum[kThreads], s_abs[kThreads];
  s_sum[threadIdx.x] = sum;
  s_abs[threadIdx.x] = abs_sum;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      s_sum[threadIdx.x] += s_sum[threadIdx.x + w];
      s_abs[threadIdx.x] += s_abs[threadIdx.x + w];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    out[blockIdx.x] = GemmSampleResult{s_sum[0], s_abs[0], load(c, out_elem, i + j * m)};
  }
}

}  // namespace

void gemm_reference_samples(const void* a, const void* b, Elem in, const void* c, Elem out_elem,
                            int64_t m, int64_t /*n*/, int64_t k, const int64_t* rows,
                            const int64_t* cols, int count, GemmSampleResult* out, cudaStream_t s) {
  if (count <= 0) return;
  reference_kernel<<<count, kThreads, 0, s>>>(a, b, in, c, out_elem, m, k, rows, cols, out);
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
