// Fills device buffers with random normal values (counter-based: the same seed gives the same
// data on any GPU and launch shape), converted to the buffer's element type. Matmul inputs must
// be random: zeros and low-entropy patterns draw less power and run faster than real data.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/elem.hpp"

namespace ub::gpu {

void fill_normal(void* p, Elem e, size_t count, uint64_t seed, float stddev, cudaStream_t s);
// Every element set to `value` (converted to the type); e.g. block scales of 1.0.
void fill_constant_bytes(void* p, unsigned char byte, size_t bytes, cudaStream_t s);

}  // namespace ub::gpu
