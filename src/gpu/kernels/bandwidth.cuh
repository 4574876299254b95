// HBM bandwidth kernels: copy, read and write with 16-byte accesses (int4), several independent
// accesses in flight per thread. Launch shapes, chosen with `BandwidthKernel`:
//   tiled       one tile of 512 threads x 4 vectors per block, as many blocks as tiles (the shape
//               PyTorch's elementwise kernels use)
//   tiled8      tiles of 256 threads x 8 vectors: twice the bytes in flight per thread
//   tiled8cs    tiled8 with streaming (evict-first) loads and stores
//   tiled8pf    tiled8 with non-coherent loads that ask L2 to fetch whole 256-byte sectors
//               (ld.global.nc.L1::no_allocate.L2::256B) and streaming stores
//   persistent  one wave of blocks (occupancy x SMs) striding over the whole buffer
//   bulk        copy through shared memory with Hopper's bulk copy engine (cp.async.bulk, sm_90+):
//               one thread per block streams 32 KiB chunks in and out, 4 stages deep (read
//               and write fall back to tiled8cs)
//   memcpy      cudaMemcpyAsync device to device (copy only): the driver's path, which is what
//               a PyTorch tensor copy runs; a reference, not our kernel
// The read kernels always reduce per block first, so the check costs one atomic per block.
// Each has a check: the copy's destination equals its source, the read's 64-bit sum of every
// 32-bit word equals n(n-1)/2 for words filled with their own index (any word skipped or read
// twice changes it), the write's words equal the pattern.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ub::gpu {

enum class BandwidthKernel { tiled, tiled8, tiled8cs, tiled8pf, persistent, bulk, memcpy };
std::string_view to_string(BandwidthKernel k);
// Throws UsageError naming the known kernels.
BandwidthKernel parse_bandwidth_kernel(std::string_view name);

// Buffers are `bytes` long, a multiple of 64.
void bandwidth_copy(void* dst, const void* src, size_t bytes, BandwidthKernel k, cudaStream_t s);
void bandwidth_read(const void* src, size_t bytes, unsigned long long* sum_out, BandwidthKernel k,
                    cudaStream_t s);
void bandwidth_write(void* dst, size_t bytes, unsigned pattern, BandwidthKernel k, cudaStream_t s);

// Fills 32-bit words with their index.
void fill_word_index(void* p, size_t bytes, cudaStream_t s);
// Counts words of `p` differing from their index (expect_index) or from `pattern`.
void count_mismatches(const void* p, size_t bytes, bool expect_index, unsigned pattern,
                      unsigned long long* count_out, cudaStream_t s);

// 0 + 1 + ... + (n-1) of the 32-bit word values (the read check's expectation).
constexpr unsigned long long sum_of_word_indices(uint64_t n) {
  // Words hold their index modulo 2^32; buffers are at most 16 GiB (2^32 words).
  return n == 0 ? 0 : static_cast<unsigned long long>(n) * (n - 1) / 2;
}

}  // namespace ub::gpu
