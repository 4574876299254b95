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
// Launches over n elements eight at a time.
unsigned grid_for8(size_t n) { return grid_for((n + 7) / 8); }

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

struct StepScalars {
  float lr, beta1, beta2, eps, wd, bias1, bias2, max_norm;
};

// Eight consecutive elements of a gradient / state / weight vector, fp32 (two 16-byte accesses)
// or bf16 (one), as floats.
struct Eight {
  float v[8];
};
template <class T>
struct Octet;
template <>
struct Octet<float> {
  static __device__ __forceinline__ Eight load(const float* p, size_t i) {
    const auto* q = reinterpret_cast<const float4*>(p) + 2 * i;
    const float4 a = q[0], b = q[1];
    return {{a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w}};
  }
  static __device__ __forceinline__ void store(float* p, size_t i, const Eight& e) {
    auto* q = reinterpret_cast<float4*>(p) + 2 * i;
    q[0] = make_float4(e.v[0], e.v[1], e.v[2], e.v[3]);
    q[1] = make_float4(e.v[4], e.v[5], e.v[6], e.v[7]);
  }
};
template <>
struct Octet<bf16> {
  static __device__ __forceinline__ Eight load(const bf16* p, size_t i) {
    const uint4 raw = reinterpret_cast<const uint4*>(p)[i];
    const auto* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
    Eight e;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const float2 f = __bfloat1622float2(h[q]);
      e.v[2 * q] = f.x, e.v[2 * q + 1] = f.y;
    }
    return e;
  }
  static __device__ __forceinline__ void store(bf16* p, size_t i, const Eight& e) {
    uint4 raw;
    auto* h = reinterpret_cast<__nv_bfloat162*>(&raw);
#pragma unroll
    for (int q = 0; q < 4; ++q) h[q] = __floats2bfloat162_rn(e.v[2 * q], e.v[2 * q + 1]);
    reinterpret_cast<uint4*>(p)[i] = raw;
  }
};

template <class G>
__global__ void squares_kernel(const G* g, size_t n, double* acc) {
  float s = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n / 8; i += size_t{gridDim.x} * blockDim.x) {
    const Eight e = Octet<G>::load(g, i);
#pragma unroll
    for (int q = 0; q < 8; ++q) s += e.v[q] * e.v[q];
  }
  const double b = block_sum(static_cast<double>(s));
  if (threadIdx.x == 0) atomicAdd(acc, b);
}

// n is a multiple of 8 (the layout pads every tensor to 128 elements): 16-byte accesses.
template <class State, class G>
__global__ void adamw_kernel(float* master, bf16* w16, const G* g, State* m, State* v, size_t n,
                             const double* norm_sq, StepScalars k) {
  const float coef = clip_coefficient(static_cast<float>(sqrt(*norm_sq)), k.max_norm);
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n / 8; i += size_t{gridDim.x} * blockDim.x) {
    Eight p = master ? Octet<float>::load(master, i) : Octet<bf16>::load(w16, i);
    Eight mi = Octet<State>::load(m, i), vi = Octet<State>::load(v, i);
    const Eight gi = Octet<G>::load(g, i);
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      adamw_update(p.v[q], mi.v[q], vi.v[q], gi.v[q] * coef, k.lr, k.beta1, k.beta2, k.eps, k.wd, k.bias1, k.bias2);
    }
    if (master) Octet<float>::store(master, i, p);
    Octet<bf16>::store(w16, i, p);
    Octet<State>::store(m, i, mi);
    Octet<State>::store(v, i, vi);
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

void accumulate_squares(const void* g, bool bf16_grads, size_t n, double* norm_sq, cudaStream_t s) {
  if (n % 8 != 0) throw WorkError("accumulate_squares: n must be a multiple of 8");
  if (bf16_grads) {
    squares_kernel<<<grid_for8(n), 256, 0, s>>>(static_cast<const bf16*>(g), n, norm_sq);
  } else {
    squares_kernel<<<grid_for8(n), 256, 0, s>>>(static_cast<const float*>(g), n, norm_sq);
  }
  UB_CUDA_CHECK_LAUNCH();
}

namespace {

template <class G>
void launch_adamw(float* master, void* w16, const G* g, void* m, void* v, bool bf16_state, size_t n,
                  const double* norm_sq, const StepScalars& k, cudaStream_t s) {
  if (bf16_state) {
    adamw_kernel<<<grid_for8(n), 256, 0, s>>>(master, static_cast<bf16*>(w16), g, static_cast<bf16*>(m),
                                             static_cast<bf16*>(v), n, norm_sq, k);
  } else {
    adamw_kernel<<<grid_for8(n), 256, 0, s>>>(master, static_cast<bf16*>(w16), g, static_cast<float*>(m),
                                             static_cast<float*>(v), n, norm_sq, k);
  }
}

}  // namespace

void adamw_step(float* master, void* w16, const void* g, bool bf16_grads, void* m, void* v, bool bf16_state, size_t n,
                const double* norm_sq, const AdamWParams& p, int64_t step, cudaStream_t s) {
  const double t = static_cast<double>(step);
  const StepScalars k{static_cast<float>(p.lr), static_cast<float>(p.beta1), static_cast<float>(p.beta2),
                      static_cast<float>(p.eps), static_cast<float>(p.weight_decay),
                      static_cast<float>(1 - std::pow(p.beta1, t)), static_cast<float>(1 - std::pow(p.beta2, t)),
                      static_cast<float>(p.max_grad_norm)};
  if (n % 8 != 0) throw WorkError("adamw_step: n must be a multiple of 8");
  if (bf16_grads) {
    launch_adamw(master, w16, static_cast<const bf16*>(g), m, v, bf16_state, n, norm_sq, k, s);
  } else {
    launch_adamw(master, w16, static_cast<const float*>(g), m, v, bf16_state, n, norm_sq, k, s);
  }
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
