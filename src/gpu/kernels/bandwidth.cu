// Bandwidth kernels; see bandwidth.cuh.
#include "gpu/check.hpp"
#include "gpu/kernels/bandwidth.cuh"

namespace ub::gpu {

namespace {

constexpr int kThreads = 512;
constexpr int kUnroll = 4;
constexpr size_t kTile = size_t{kThreads} * kUnroll;

__device__ __forceinline__ unsigned long long word_sum(const int4& v) {
  return static_cast<unsigned long long>(static_cast<unsigned>(v.x)) + static_cast<unsigned>(v.y) +
         static_cast<unsigned>(v.z) + static_cast<unsigned>(v.w);
}

// Tiled: block b owns vectors [b*kTile, (b+1)*kTile), thread t the ones t, t+kThreads, ...
__global__ void __launch_bounds__(kThreads) copy_tiled(int4* __restrict__ dst,
                                                       const int4* __restrict__ src, size_t n) {
  const size_t base = blockIdx.x * kTile + threadIdx.x;
  int4 v[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    if (base + u * kThreads < n) v[u] = src[base + u * kThreads];
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    if (base + u * kThreads < n) dst[base + u * kThreads] = v[u];
  }
}

__global__ void __launch_bounds__(kThreads) read_tiled(const int4* __restrict__ src, size_t n,
                                                       unsigned long long* sum_out) {
  const size_t base = blockIdx.x * kTile + threadIdx.x;
  int4 v[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    v[u] = base + u * kThreads < n ? src[base + u * kThreads] : make_int4(0, 0, 0, 0);
  }
  unsigned long long acc = 0;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) acc += word_sum(v[u]);
  for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum_out, acc);
}

__global__ void __launch_bounds__(kThreads) write_tiled(int4* __restrict__ dst, size_t n,
                                                        unsigned pattern) {
  const size_t base = blockIdx.x * kTile + threadIdx.x;
  const int p = static_cast<int>(pattern);
  const int4 v = make_int4(p, p, p, p);
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    if (base + u * kThreads < n) dst[base + u * kThreads] = v;
  }
}

// Persistent: one wave of blocks striding over the buffer, kUnroll vectors per step.
__global__ void __launch_bounds__(kThreads) copy_persistent(int4* __restrict__ dst,
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

__global__ void __launch_bounds__(kThreads) read_persistent(const int4* __restrict__ src, size_t n,
                                                            unsigned long long* sum_out) {
  const size_t stride = size_t{gridDim.x} * kThreads;
  size_t i = blockIdx.x * size_t{kThreads} + threadIdx.x;
  unsigned long long acc = 0;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += word_sum(v[u]);
  }
  for (; i < n; i += stride) acc += word_sum(src[i]);
  for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum_out, acc);
}

__global__ void __launch_bounds__(kThreads) write_persistent(int4* __restrict__ dst, size_t n,
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

unsigned tiles(size_t vectors) { return static_cast<unsigned>((vectors + kTile - 1) / kTile); }

// One wave of the persistent kernels on the current device (cached per thread: a worker thread
// stays on its device, and the query must stay out of timed launches).
unsigned persistent_blocks() {
  thread_local int cached_device = -1;
  thread_local unsigned cached_blocks = 0;
  int device = 0;
  UB_CUDA_CHECK(cudaGetDevice(&device));
  if (device != cached_device) {
    int sms = 0, per_sm = 0;
    UB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    UB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, copy_persistent, kThreads, 0));
    cached_device = device;
    cached_blocks = static_cast<unsigned>(sms * per_sm);
  }
  return cached_blocks;
}

}  // namespace

std::string_view to_string(BandwidthKernel k) {
  return k == BandwidthKernel::tiled ? "tiled" : "persistent";
}

void bandwidth_copy(void* dst, const void* src, size_t bytes, BandwidthKernel k, cudaStream_t s) {
  const size_t n = bytes / sizeof(int4);
  auto* d = static_cast<int4*>(dst);
  const auto* x = static_cast<const int4*>(src);
  if (k == BandwidthKernel::tiled) copy_tiled<<<tiles(n), kThreads, 0, s>>>(d, x, n);
  else copy_persistent<<<persistent_blocks(), kThreads, 0, s>>>(d, x, n);
  UB_CUDA_CHECK_LAUNCH();
}

void bandwidth_read(const void* src, size_t bytes, unsigned long long* sum_out, BandwidthKernel k,
                    cudaStream_t s) {
  const size_t n = bytes / sizeof(int4);
  const auto* x = static_cast<const int4*>(src);
  if (k == BandwidthKernel::tiled) read_tiled<<<tiles(n), kThreads, 0, s>>>(x, n, sum_out);
  else read_persistent<<<persistent_blocks(), kThreads, 0, s>>>(x, n, sum_out);
  UB_CUDA_CHECK_LAUNCH();
}

void bandwidth_write(void* dst, size_t bytes, unsigned pattern, BandwidthKernel k, cudaStream_t s) {
  const size_t n = bytes / sizeof(int4);
  auto* d = static_cast<int4*>(dst);
  if (k == BandwidthKernel::tiled) write_tiled<<<tiles(n), kThreads, 0, s>>>(d, n, pattern);
  else write_persistent<<<persistent_blocks(), kThreads, 0, s>>>(d, n, pattern);
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
