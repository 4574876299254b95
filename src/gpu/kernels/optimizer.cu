// Parameter initialisation, the global gradient norm and AdamW over the flat parameter buffer;
// see llama_ops.cuh. Grid-stride loops over the whole buffer: one launch each per step.
#include <cuda_bf16.h>

#include <cmath>

#include "gpu/check.hpp"
#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/llama_ops.cuh"
#include "model/counter_rng.hpp"

namespace ub::gpu {

namespace {

using bf16 = __nv_bfloat16;

unsigned grid_for(size_t n) { return static_cast<unsigned>(std::min<size_t>((n + 255) / 256, 8192)); }
// Launches over n elements four at a time.
unsigned grid_for4(size_t n) { return grid_for((n + 3) / 4); }

__global__ void init_kernel(float* master, bf16* w16, size_t count, uint64_t index, uint64_t seed, float stddev,
                            bool ones) {
  for (size_t j = blockIdx.x * size_t{blockDim.x} + threadIdx.x; j < count; j += size_t{gridDim.x} * blockDim.x) {
    const float v = ones ? 1.0f : normal_at(seed, index + j) * stddev;
    if (master) master[j] = v;
    if (w16) w16[j] = __float2bfloat16(v);
  }
}

__global__ void cast_kernel(const float* src, bf16* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    dst[i] = __float2bfloat16(src[i]);
  }
}

// Four consecutive elements of a state / weight vector, fp32 or bf16.
template <class T>
struct Quad;
template <>
struct Quad<float> {
  static __device__ __forceinline__ float4 load(const float* p, size_t i) { return reinterpret_cast<const float4*>(p)[i]; }
  static __device__ __forceinline__ void store(float* p, size_t i, float4 v) { reinterpret_cast<float4*>(p)[i] = v; }
};
template <>
struct Quad<bf16> {
  static __device__ __forceinline__ float4 load(const bf16* p, size_t i) {
    const uint2 raw = reinterpret_cast<const uint2*>(p)[i];
    const auto* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
    const float2 a = __bfloat1622float2(h[0]), b = __bfloat1622float2(h[1]);
    return make_float4(a.x, a.y, b.x, b.y);
  }
  static __device__ __forceinline__ void store(bf16* p, size_t i, float4 v) {
    uint2 raw;
    auto* h = reinterpret_cast<__nv_bfloat162*>(&raw);
    h[0] = __floats2bfloat162_rn(v.x, v.y);
    h[1] = __floats2bfloat162_rn(v.z, v.w);
    reinterpret_cast<uint2*>(p)[i] = raw;
  }
};

template <class G>
__global__ void squares_kernel(const G* g, size_t n, double* acc) {
  float s = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n / 4; i += size_t{gridDim.x} * blockDim.x) {
    const float4 v = Quad<G>::load(g, i);
    s += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
  }
  const double b = block_sum(static_cast<double>(s));
  if (threadIdx.x == 0) atomicAdd(acc, b);
}

__device__ __forceinline__ float& at(float4& v, int k) { return (&v.x)[k]; }

// n is a multiple of 4 (the layout pads every tensor to 128 elements): 16-byte accesses.
template <class State, class G>
__global__ void adamw_kernel(float* master, bf16* w16, const G* g, State* m, State* v, size_t n,
                             const double* norm_sq, AdamWScalars k) {
  const float coef = clip_coefficient(static_cast<float>(sqrt(*norm_sq)), k.max_norm);
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n / 4; i += size_t{gridDim.x} * blockDim.x) {
    float4 p = master ? Quad<float>::load(master, i) : Quad<bf16>::load(w16, i);
    float4 mi = Quad<State>::load(m, i), vi = Quad<State>::load(v, i);
    const float4 gi = Quad<G>::load(g, i);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      adamw_update(at(p, q), at(mi, q), at(vi, q), (&gi.x)[q] * coef, k.lr, k.beta1, k.beta2, k.eps, k.wd, k.bias1, k.bias2);
    }
    if (master) Quad<float>::store(master, i, p);
    Quad<bf16>::store(w16, i, p);
    Quad<State>::store(m, i, mi);
    Quad<State>::store(v, i, vi);
  }
}

}  // namespace

void init_parameters(float* master, bf16* w16, size_t count, uint64_t index, uint64_t seed, float stddev, bool ones,
                     cudaStream_t s) {
  init_kernel<<<grid_for(count), 256, 0, s>>>(master, w16, count, index, seed, stddev, ones);
  UB_CUDA_CHECK_LAUNCH();
}

void cast_to_bf16(const float* master, bf16* w16, size_t n, cudaStream_t s) {
  cast_kernel<<<grid_for(n), 256, 0, s>>>(master, w16, n);
  UB_CUDA_CHECK_LAUNCH();
}

void accumulate_squares(ConstFp32OrBf16 g, size_t n, double* norm_sq, cudaStream_t s) {
  if (n % 4 != 0) throw WorkError("accumulate_squares: n must be a multiple of 4");
  visit(g, [&](const auto* typed) { squares_kernel<<<grid_for4(n), 256, 0, s>>>(typed, n, norm_sq); });
  UB_CUDA_CHECK_LAUNCH();
}

void adamw_step(float* master, bf16* w16, ConstFp32OrBf16 g, Fp32OrBf16 m, Fp32OrBf16 v, size_t n,
                const double* norm_sq, const AdamWParams& p, int64_t step, cudaStream_t s) {
  const AdamWScalars k = adamw_scalars(p, step);
  if (n % 4 != 0) throw WorkError("adamw_step: n must be a multiple of 4");
  if (m.elem != v.elem) throw WorkError("adamw_step: the two moments must have one type");
  visit(g, [&](const auto* grad) {
    visit(m, [&](auto* first) {
      adamw_kernel<<<grid_for4(n), 256, 0, s>>>(master, w16, grad, first, static_cast<decltype(first)>(v.data), n,
                                               norm_sq, k);
    });
  });
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
