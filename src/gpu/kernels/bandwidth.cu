// Bandwidth kernels; see bandwidth.cuh.
#include <string>

#include "gpu/check.hpp"
#include "gpu/kernels/bandwidth.cuh"
#include "gpu/kernels/sm_count.cuh"

namespace ub::gpu {

namespace {

__device__ __forceinline__ unsigned long long word_sum(const int4& v) {
  return static_cast<unsigned long long>(static_cast<unsigned>(v.x)) + static_cast<unsigned>(v.y) +
         static_cast<unsigned>(v.z) + static_cast<unsigned>(v.w);
}

// Access flavours of the tiled kernels: plain, streaming (evict-first), and 256-byte L2 fetches
// with streaming stores.
enum Flavour { kPlain, kStreaming, kPrefetch256 };

template <int F>
__device__ __forceinline__ int4 load(const int4* p) {
  if constexpr (F == kStreaming) {
    return __ldcs(p);
  } else if constexpr (F == kPrefetch256) {
    int4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.s32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
  } else {
    return *p;
  }
}

template <int F>
__device__ __forceinline__ void store(int4* p, const int4& v) {
  if constexpr (F == kPlain) *p = v;
  else __stcs(p, v);
}

// Sums `acc` over the block and adds it to *out with one atomic.
template <int kThreads>
__device__ __forceinline__ void block_sum_to(unsigned long long acc, unsigned long long* out) {
  for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  __shared__ unsigned long long warp_sums[kThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long total = 0;
    for (int w = 0; w < kThreads / 32; ++w) total += warp_sums[w];
    atomicAdd(out, total);
  }
}

// Tiled: block b owns vectors [b*T*U, (b+1)*T*U), thread t the ones t, t+T, t+2T, ...
template <int T, int U, int S>
__global__ void __launch_bounds__(T) copy_tiled(int4* __restrict__ dst, const int4* __restrict__ src,
                                                size_t n) {
  const size_t base = blockIdx.x * size_t{T} * U + threadIdx.x;
  int4 v[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (base + u * T < n) v[u] = load<S>(src + base + u * T);
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (base + u * T < n) store<S>(dst + base + u * T, v[u]);
  }
}

template <int T, int U, int S>
__global__ void __launch_bounds__(T) read_tiled(const int4* __restrict__ src, size_t n,
                                                unsigned long long* sum_out) {
  const size_t base = blockIdx.x * size_t{T} * U + threadIdx.x;
  int4 v[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    v[u] = base + u * T < n ? load<S>(src + base + u * T) : make_int4(0, 0, 0, 0);
  }
  unsigned long long acc = 0;
#pragma unroll
  for (int u = 0; u < U; ++u) acc += word_sum(v[u]);
  block_sum_to<T>(acc, sum_out);
}

template <int T, int U, int S>
__global__ void __launch_bounds__(T) write_tiled(int4* __restrict__ dst, size_t n, unsigned pattern) {
  const size_t base = blockIdx.x * size_t{T} * U + threadIdx.x;
  const int p = static_cast<int>(pattern);
  const int4 v = make_int4(p, p, p, p);
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (base + u * T < n) store<S>(dst + base + u * T, v);
  }
}

// Persistent: one wave of blocks striding over the buffer, kUnroll vectors per step.
constexpr int kPThreads = 512;
constexpr int kPUnroll = 4;

__global__ void __launch_bounds__(kPThreads) copy_persistent(int4* __restrict__ dst,
                                                             const int4* __restrict__ src, size_t n) {
  const size_t stride = size_t{gridDim.x} * kPThreads;
  size_t i = blockIdx.x * size_t{kPThreads} + threadIdx.x;
  for (; i + (kPUnroll - 1) * stride < n; i += kPUnroll * stride) {
    int4 v[kPUnroll];
#pragma unroll
    for (int u = 0; u < kPUnroll; ++u) v[u] = __ldcs(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kPUnroll; ++u) __stcs(dst + i + u * stride, v[u]);
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

__global__ void __launch_bounds__(kPThreads) read_persistent(const int4* __restrict__ src, size_t n,
                                                             unsigned long long* sum_out) {
  const size_t stride = size_t{gridDim.x} * kPThreads;
  size_t i = blockIdx.x * size_t{kPThreads} + threadIdx.x;
  unsigned long long acc = 0;
  for (; i + (kPUnroll - 1) * stride < n; i += kPUnroll * stride) {
    int4 v[kPUnroll];
#pragma unroll
    for (int u = 0; u < kPUnroll; ++u) v[u] = __ldcs(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kPUnroll; ++u) acc += word_sum(v[u]);
  }
  for (; i < n; i += stride) acc += word_sum(src[i]);
  block_sum_to<kPThreads>(acc, sum_out);
}

__global__ void __launch_bounds__(kPThreads) write_persistent(int4* __restrict__ dst, size_t n,
                                                              unsigned pattern) {
  const size_t stride = size_t{gridDim.x} * kPThreads;
  const int p = static_cast<int>(pattern);
  const int4 v = make_int4(p, p, p, p);
  size_t i = blockIdx.x * size_t{kPThreads} + threadIdx.x;
  for (; i + (kPUnroll - 1) * stride < n; i += kPUnroll * stride) {
#pragma unroll
    for (int u = 0; u < kPUnroll; ++u) __stcs(dst + i + u * stride, v);
  }
  for (; i < n; i += stride) dst[i] = v;
}

// Bulk copy through shared memory (bandwidth.cuh). Thread 0 of each block drives the copy
// engine: loads complete on one mbarrier per stage, stores are tracked as bulk groups; stage s
// is reloaded only once the store that read it has finished reading (wait_group.read).
constexpr unsigned kBulkChunk = 32 * 1024;
constexpr int kBulkStages = 4;

__global__ void __launch_bounds__(32) copy_bulk(char* __restrict__ dst, const char* __restrict__ src,
                                                size_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ __align__(8) unsigned long long bars[kBulkStages];
  if (threadIdx.x != 0) return;
  const size_t chunks = (bytes + kBulkChunk - 1) / kBulkChunk;
  const unsigned smem_base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  auto bar = [&](int s) { return static_cast<unsigned>(__cvta_generic_to_shared(&bars[s])); };
  for (int s = 0; s < kBulkStages; ++s) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar(s)));
  }
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  auto size_of = [&](size_t c) {
    const size_t off = c * kBulkChunk;
    return static_cast<unsigned>(bytes - off < kBulkChunk ? bytes - off : kBulkChunk);
  };
  auto load = [&](size_t it) {
    const size_t c = blockIdx.x + it * gridDim.x;
    const int s = static_cast<int>(it % kBulkStages);
    const unsigned n = size_of(c);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar(s)), "r"(n) : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            smem_base + s * kBulkChunk),
        "l"(src + c * kBulkChunk), "r"(n), "r"(bar(s))
        : "memory");
  };
  const size_t my_chunks = chunks > blockIdx.x ? (chunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  for (size_t it = 0; it < my_chunks && it + 1 < kBulkStages; ++it) load(it);
  for (size_t it = 0; it < my_chunks; ++it) {
    const int s = static_cast<int>(it % kBulkStages);
    const unsigned parity = static_cast<unsigned>((it / kBulkStages) & 1);
    unsigned done = 0;
    while (!done) {
      asm volatile(
          "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
          : "=r"(done)
          : "r"(bar(s)), "r"(parity)
          : "memory");
    }
    const size_t c = blockIdx.x + it * gridDim.x;
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst + c * kBulkChunk),
                 "r"(smem_base + s * kBulkChunk), "r"(size_of(c))
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    const size_t next = it + kBulkStages - 1;  // goes into the stage of iteration it-1
    if (next < my_chunks) {
      asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");  // store it-1 done reading
      load(next);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
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

template <int T, int U>
unsigned tiles(size_t vectors) {
  return static_cast<unsigned>((vectors + size_t{T} * U - 1) / (size_t{T} * U));
}

// One wave of the persistent kernels on the current device (cached per thread: a worker thread
// stays on its device, and the query must stay out of timed launches).
unsigned persistent_blocks() {
  thread_local int cached_device = -1;
  thread_local unsigned cached_blocks = 0;
  int device = 0;
  UB_CUDA_CHECK(cudaGetDevice(&device));
  if (device != cached_device) {
    int per_sm = 0;
    UB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, copy_persistent, kPThreads, 0));
    cached_device = device;
    cached_blocks = static_cast<unsigned>(current_sm_count() * per_sm);
  }
  return cached_blocks;
}

// Launches the tiled variant <T, U, S> of a kernel family over n vectors.
#define UB_LAUNCH_TILED(kernel, n, s, ...)                                                  \
  switch (k) {                                                                              \
    case BandwidthKernel::tiled: kernel<512, 4, kPlain><<<tiles<512, 4>(n), 512, 0, s>>>(__VA_ARGS__); break; \
    case BandwidthKernel::tiled8: kernel<256, 8, kPlain><<<tiles<256, 8>(n), 256, 0, s>>>(__VA_ARGS__); break; \
    case BandwidthKernel::tiled8pf: kernel<256, 8, kPrefetch256><<<tiles<256, 8>(n), 256, 0, s>>>(__VA_ARGS__); break; \
    default: kernel<256, 8, kStreaming><<<tiles<256, 8>(n), 256, 0, s>>>(__VA_ARGS__); break; \
  }

}  // namespace

std::string_view to_string(BandwidthKernel k) {
  switch (k) {
    case BandwidthKernel::tiled: return "tiled";
    case BandwidthKernel::tiled8: return "tiled8";
    case BandwidthKernel::tiled8cs: return "tiled8cs";
    case BandwidthKernel::tiled8pf: return "tiled8pf";
    case BandwidthKernel::persistent: return "persistent";
    case BandwidthKernel::bulk: return "bulk";
    case BandwidthKernel::memcpy: return "memcpy";
  }
  return "?";
}

BandwidthKernel parse_bandwidth_kernel(std::string_view name) {
  for (BandwidthKernel k : {BandwidthKernel::tiled, BandwidthKernel::tiled8, BandwidthKernel::tiled8cs,
                            BandwidthKernel::tiled8pf,
                            BandwidthKernel::persistent, BandwidthKernel::bulk, BandwidthKernel::memcpy}) {
    if (to_string(k) == name) return k;
  }
  throw UsageError("--kernel: unknown kernel '" + std::string(name) +
                   "' (tiled, tiled8, tiled8cs, tiled8pf, persistent, bulk, memcpy)");
}

void bandwidth_copy(void* dst, const void* src, size_t bytes, BandwidthKernel k, cudaStream_t s) {
  const size_t n = bytes / sizeof(int4);
  auto* d = static_cast<int4*>(dst);
  const auto* x = static_cast<const int4*>(src);
  if (k == BandwidthKernel::memcpy) {
    UB_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(int4), cudaMemcpyDeviceToDevice, s));
    return;
  }
  if (k == BandwidthKernel::persistent) {
    copy_persistent<<<persistent_blocks(), kPThreads, 0, s>>>(d, x, n);
  } else if (k == BandwidthKernel::bulk) {
    constexpr int smem = kBulkChunk * kBulkStages;
    thread_local bool configured = false;
    if (!configured) {
      UB_CUDA_CHECK(cudaFuncSetAttribute(copy_bulk, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      configured = true;
    }
    copy_bulk<<<current_sm_count(), 32, smem, s>>>(static_cast<char*>(dst), static_cast<const char*>(src),
                                    n * sizeof(int4));
  } else {
    UB_LAUNCH_TILED(copy_tiled, n, s, d, x, n)
  }
  UB_CUDA_CHECK_LAUNCH();
}

void bandwidth_read(const void* src, size_t bytes, unsigned long long* sum_out, BandwidthKernel k,
                    cudaStream_t s) {
  const size_t n = bytes / sizeof(int4);
  const auto* x = static_cast<const int4*>(src);
  if (k == BandwidthKernel::persistent || k == BandwidthKernel::memcpy) {
    read_persistent<<<persistent_blocks(), kPThreads, 0, s>>>(x, n, sum_out);
  } else {
    UB_LAUNCH_TILED(read_tiled, n, s, x, n, sum_out)
  }
  UB_CUDA_CHECK_LAUNCH();
}

void bandwidth_write(void* dst, size_t bytes, unsigned pattern, BandwidthKernel k, cudaStream_t s) {
  const size_t n = bytes / sizeof(int4);
  auto* d = static_cast<int4*>(dst);
  if (k == BandwidthKernel::memcpy) {
    // The driver's fill: cudaMemsetD32-style through the runtime (a byte pattern, so repeat it).
    UB_CUDA_CHECK(cudaMemsetAsync(dst, static_cast<int>(pattern & 0xFF), n * sizeof(int4), s));
    return;
  }
  if (k == BandwidthKernel::persistent) {
    write_persistent<<<persistent_blocks(), kPThreads, 0, s>>>(d, n, pattern);
  } else {
    UB_LAUNCH_TILED(write_tiled, n, s, d, n, pattern)
  }
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
