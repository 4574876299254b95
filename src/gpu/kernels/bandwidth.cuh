// HBM bandwidth kernels: copy, read and write with 16-byte accesses (int4), four independent
// accesses in flight per thread per iteration, grid-stride over a persistent grid. Each has a
// check: the copy's destination equals its source, the read's XOR of every word equals the
// closed form for words filled with their own index, the write's words equal the pattern.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace ub::gpu {

// Buffers are `bytes` long, a multiple of 64.
void bandwidth_copy(void* dst, const void* src, size_t bytes, int blocks, cudaStream_t s);
void bandwidth_read(const void* src, size_t bytes, unsigned* xor_out, int blocks, cudaStream_t s);
void bandwidth_write(void* dst, size_t bytes, unsigned pattern, int blocks, cudaStream_t s);

// The grid the kernels run best with on this device (blocks per SM x SMs).
int bandwidth_blocks(int device);

// Fills 32-bit words with their index.
void fill_word_index(void* p, size_t bytes, cudaStream_t s);
// Counts words of `p` differing from their index (expect_index) or from `pattern`.
void count_mismatches(const void* p, size_t bytes, bool expect_index, unsigned pattern,
                      unsigned long long* count_out, cudaStream_t s);

// XOR of 0, 1, ..., n-1 (the read check's expectation).
constexpr unsigned xor_of_range(uint64_t n) {
  if (n == 0) return 0;
  const uint64_t last = n - 1;
  switch (last % 4) {
    case 0: return static_cast<unsigned>(last);
    case 1: return 1;
    case 2: return static_cast<unsigned>(last + 1);
    default: return 0;
  }
}

}  // namespace ub::gpu
