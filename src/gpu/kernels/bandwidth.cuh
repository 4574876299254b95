// HBM bandwidth kernels: copy, read and write with 16-byte accesses (int4), several independent
// accesses in flight per thread. Two launch shapes, chosen with `BandwidthKernel`:
//   tiled       one tile of kThreads x kUnroll vectors per block, as many blocks as tiles (the
//               shape PyTorch's elementwise kernels use)
//   persistent  one wave of blocks (occupancy x SMs) striding over the whole buffer
// Each has a check: the copy's destination equals its source, the read's 64-bit sum of every
// 32-bit word equals n(n-1)/2 for words filled with their own index (any word skipped or read
// twice changes it), the write's words equal the pattern.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ub::gpu {

enum class BandwidthKernel { tiled, persistent };
std::string_view to_string(BandwidthKernel k);

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
