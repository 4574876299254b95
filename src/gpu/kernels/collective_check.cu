// Crafted collective inputs and the exact check of the outputs; see collective_check.cuh.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>

#include "gpu/check.hpp"
#include "gpu/kernels/collective_check.cuh"

namespace ub::gpu {

namespace {

unsigned grid_for(size_t n) { return static_cast<unsigned>(std::min<size_t>((n + 255) / 256, 4096)); }

__device__ __forceinline__ float pattern(int rank, size_t i, bool sign_only) {
  const int v = static_cast<int>((7 * (i % 5) + 3 * static_cast<size_t>(rank)) % 5) - 2;
  return static_cast<float>(sign_only ? (v > 0) - (v < 0) : v);
}

template <class T>
__device__ __forceinline__ T from_float(float v) { return static_cast<T>(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float(float v) { return __float2bfloat16(v); }
template <>
__device__ __forceinline__ __half from_float(float v) { return __float2half(v); }
template <>
__device__ __forceinline__ __nv_fp8_e4m3 from_float(float v) { return __nv_fp8_e4m3(v); }

template <class T>
__device__ __forceinline__ float to_float(T v) { return static_cast<float>(v); }

template <class T>
__global__ void fill_kernel(T* p, size_t n, int rank, bool sign_only) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    p[i] = from_float<T>(pattern(rank, i, sign_only));
  }
}

template <class T>
__global__ void check_kernel(const T* out, Collective c, size_t recv, size_t part, int rank, int world, int root,
                             bool sign_only, unsigned long long* wrong) {
  unsigned long long bad = 0;
  for (size_t j = blockIdx.x * size_t{blockDim.x} + threadIdx.x; j < recv; j += size_t{gridDim.x} * blockDim.x) {
    float want = 0;
    switch (c) {
      case Collective::all_reduce:
      case Collective::reduce:
        for (int r = 0; r < world; ++r) want += pattern(r, j, sign_only);
        break;
      case Collective::reduce_scatter:
        for (int r = 0; r < world; ++r) want += pattern(r, static_cast<size_t>(rank) * part + j, sign_only);
        break;
      case Collective::all_gather: want = pattern(static_cast<int>(j / part), j % part, sign_only); break;
      case Collective::alltoall:
        want = pattern(static_cast<int>(j / part), static_cast<size_t>(rank) * part + j % part, sign_only);
        break;
      case Collective::broadcast: want = pattern(root, j, sign_only); break;
      case Collective::sendrecv: want = pattern((rank + world - 1) % world, j, sign_only); break;
    }
    const float got = to_float(out[j]);
    bad += !(got == want);  // NaN is never equal
  }
  if (bad) atomicAdd(wrong, bad);
}

template <class F>
void dispatch(Elem e, F f) {
  switch (e) {
    case Elem::bf16: return f(static_cast<__nv_bfloat16*>(nullptr));
    case Elem::f16: return f(static_cast<__half*>(nullptr));
    case Elem::f32: return f(static_cast<float*>(nullptr));
    case Elem::e4m3: return f(static_cast<__nv_fp8_e4m3*>(nullptr));
    default: throw WorkError("collective check: element type not supported");
  }
}

}  // namespace

void fill_collective_input(void* p, Elem e, size_t count, int rank, int world, cudaStream_t s) {
  if (count == 0) return;
  const bool sign_only = e == Elem::e4m3 && world > 8;
  dispatch(e, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fill_kernel<<<grid_for(count), 256, 0, s>>>(static_cast<T*>(p), count, rank, sign_only);
  });
  UB_CUDA_CHECK_LAUNCH();
}

void count_collective_mismatches(const void* out, Elem e, Collective c, size_t recv, size_t part, int rank, int world,
                                 int root, unsigned long long* wrong, cudaStream_t s) {
  if (recv == 0 || (c == Collective::reduce && rank != root)) return;
  const bool sign_only = e == Elem::e4m3 && world > 8;
  dispatch(e, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    check_kernel<<<grid_for(recv), 256, 0, s>>>(static_cast<const T*>(out), c, recv, part, rank, world, root, sign_only,
                                                 wrong);
  });
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
