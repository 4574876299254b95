// Bandwidth kernels; see bandwidth.cuh.
#include "gpu/check.hpp"
#include "gpu/kernels/bandwidth.cuh"

namespace ub::gpu {

namespace {

constexpr int kThreads = 512;
constexpr int kUnroll = 4;

__global__ void __launch_bounds__(kThreads) copy_kernel(int4* __restrict__ dst,
                                                        const int4* __restrict__ src, size_t n) {
  const size_t stride = size_t{gridDim.x} * kThreads;
  size_t i = blockIdx.x * size_t{kThreads} + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) __stcs(dst + i + u * stride, v[u]);
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

__global__ void __launch_bounds__(kThreads) read_kernel(const int4* __restrict__ src, size_t n,
                                                        unsigned* xor_out) {
  const size_t stride = size_t{gridDim.x} * kThreads;
  size_t i = blockIdx.x * size_t{kThreads} + threadIdx.x;
  unsigned acc = 0;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) {
    const int4 v = src[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  for (int off = 16; off > 0; off /= 2) acc ^= __shfl_xor_sync(0xffffffffu, acc, off);
  if ((threadIdx.x & 31) == 0) atomicXor(xor_out, acc);
}

__global__ void __launch_bounds__(kThreads) write_kernel(int4* __restrict__ dst, size_t n,
                                                         unsigned pattern) {
  const size_t stride = size_t{gridDim.x} * kThreads;
  const int p = static_cast<int>(pattern);
  const int4 v = make_int4(p, p, p, p);
  size_t i = blockIdx.x * size_t{kThreads} + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) __stcs(dst + i + u * stride, v);
  }
  for (; i < n; i += stride) dst[i] = v;
}

__global__ void index_kernel(unsigned* p, size_t words) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < words;
       i += size_t{gridDim.x} * blockDim.x) {
    p[i] = static_cast<unsigned>(i);
  }
}

__global__ void mismatch_kernel(const unsigned* p, size_t words, bool expect_index,
                                unsigned pattern, unsigned long long* count) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < words;
       i += size_t{gridDim.x} * blockDim.x) {
    local += p[i] != (expect_index ? static_cast<unsigned>(i) : pattern);
  }
  if (local) atomicAdd(count, local);
}

}  // namespace

int bandwidth_blocks(int device) {
  int sms = 0, per_sm = 0;
  UB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  UB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, copy_kernel, kThreads, 0));
  return sms * per_sm;
}

void bandwidth_copy(void* dst, const void* src, size_t bytes, int blocks, cudaStream_t s) {
  copy_kernel<<<blocks, kThreads, 0, s>>>(static_cast<int4*>(dst), static_cast<const int4*>(src),
                                          bytes / sizeof(int4));
  UB_CUDA_CHECK_LAUNCH();
}

void bandwidth_read(const void* src, size_t bytes, unsigned* xor_out, int blocks, cudaStream_t s) {
  read_kernel<<<blocks, kThreads, 0, s>>>(static_cast<const int4*>(src), bytes / sizeof(int4),
                                          xor_out);
  UB_CUDA_CHECK_LAUNCH();
}

void bandwidth_write(void* dst, size_t bytes, unsigned pattern, int blocks, cudaStream_t s) {
  write_kernel<<<blocks, kThreads, 0, s>>>(static_cast<int4*>(dst), bytes / sizeof(int4), pattern);
  UB_CUDA_CHECK_LAUNCH();
}

void fill_word_index(void* p, size_t bytes, cudaStream_t s) {
  index_kernel<<<4096, 256, 0, s>>>(static_cast<unsigned*>(p), bytes / 4);
  UB_CUDA_CHECK_LAUNCH();
}

void count_mismatches(const void* p, size_t bytes, bool expect_index, unsigned pattern,
                      unsigned long long* count_out, cudaStream_t s) {
  UB_CUDA_CHECK(cudaMemsetAsync(count_out, 0, sizeof(unsigned long long), s));
  mismatch_kernel<<<4096, 256, 0, s>>>(static_cast<const unsigned*>(p), bytes / 4, expect_index,
                                       pattern, count_out);
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
