// Parameter initialisation, the global gradient norm and AdamW over the flat parameter buffer;
// see llama_ops.cuh. Grid-stride loops over the whole buffer: one launch each per step.
#include <cuda_bf16.h>

#include <cmath>

#include "core/train/counter_rng.hpp"
#include "gpu/check.hpp"
#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/llama_ops.cuh"

namespace ub::gpu {

namespace {

using bf16 = __nv_bfloat16;

unsigned grid_for(size_t n) { return static_cast<unsigned>(std::min<size_t>((n + 255) / 256, 8192)); }

__global__ void init_kernel(float* master, bf16* w16, size_t offset, size_t count, uint64_t seed, float stddev,
                            bool ones) {
  for (size_t j = blockIdx.x * size_t{blockDim.x} + threadIdx.x; j < count; j += size_t{gridDim.x} * blockDim.x) {
    const size_t i = offset + j;
    const float v = ones ? 1.0f : normal_at(seed, i) * stddev;
    if (master) master[i] = v;
    w16[i] = __float2bfloat16(v);
  }
}

__global__ void cast_kernel(const float* src, bf16* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    dst[i] = __float2bfloat16(src[i]);
  }
}

__global__ void squares_kernel(const float* g, size_t n, double* acc) {
  float s = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    s += g[i] * g[i];
  }
  const double b = block_sum(static_cast<double>(s));
  if (threadIdx.x == 0) atomicAdd(acc, b);
}

struct StepScalars {
  float lr, beta1, beta2, eps, wd, bias1, bias2, max_norm;
};

template <class State>
__device__ __forceinline__ float load(const State* p, size_t i) {
  if constexpr (sizeof(State) == 2) {
    return __bfloat162float(p[i]);
  } else {
    return p[i];
  }
}
template <class State>
__device__ __forceinline__ void store(State* p, size_t i, float v) {
  if constexpr (sizeof(State) == 2) {
    p[i] = __float2bfloat16(v);
  } else {
    p[i] = v;
  }
}

template <class State>
__global__ void adamw_kernel(float* master, bf16* w16, const float* g, State* m, State* v, size_t n,
                             const double* norm_sq, StepScalars k) {
  const float coef = clip_coefficient(static_cast<float>(sqrt(*norm_sq)), k.max_norm);
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    float p = master ? master[i] : __bfloat162float(w16[i]);
    float mi = load(m, i), vi = load(v, i);
    adamw_update(p, mi, vi, g[i] * coef, k.lr, k.beta1, k.beta2, k.eps, k.wd, k.bias1, k.bias2);
    if (master) master[i] = p;
    w16[i] = __float2bfloat16(p);
    store(m, i, mi);
    store(v, i, vi);
  }
}

}  // namespace

void init_parameters(float* master, void* w16, size_t offset, size_t count, uint64_t seed, float stddev, bool ones,
                     cudaStream_t s) {
  init_kernel<<<grid_for(count), 256, 0, s>>>(master, static_cast<bf16*>(w16), offset, count, seed, stddev, ones);
  UB_CUDA_CHECK_LAUNCH();
}

void cast_to_bf16(const float* master, void* w16, size_t n, cudaStream_t s) {
  cast_kernel<<<grid_for(n), 256, 0, s>>>(master, static_cast<bf16*>(w16), n);
  UB_CUDA_CHECK_LAUNCH();
}

void accumulate_squares(const float* g, size_t n, double* norm_sq, cudaStream_t s) {
  squares_kernel<<<grid_for(n), 256, 0, s>>>(g, n, norm_sq);
  UB_CUDA_CHECK_LAUNCH();
}

void adamw_step(float* master, void* w16, const float* g, void* m, void* v, bool bf16_state, size_t n,
                const double* norm_sq, const AdamWParams& p, int64_t step, cudaStream_t s) {
  const double t = static_cast<double>(step);
  const StepScalars k{static_cast<float>(p.lr), static_cast<float>(p.beta1), static_cast<float>(p.beta2),
                      static_cast<float>(p.eps), static_cast<float>(p.weight_decay),
                      static_cast<float>(1 - std::pow(p.beta1, t)), static_cast<float>(1 - std::pow(p.beta2, t)),
                      static_cast<float>(p.max_grad_norm)};
  if (bf16_state) {
    adamw_kernel<<<grid_for(n), 256, 0, s>>>(master, static_cast<bf16*>(w16), g, static_cast<bf16*>(m),
                                             static_cast<bf16*>(v), n, norm_sq, k);
  } else {
    adamw_kernel<<<grid_for(n), 256, 0, s>>>(master, static_cast<bf16*>(w16), g, static_cast<float*>(m),
                                             static_cast<float*>(v), n, norm_sq, k);
  }
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
