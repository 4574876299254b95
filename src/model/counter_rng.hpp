// Counter-based random numbers: the value at index i depends only on (seed, i), so the GPU fills
// billions of parameters in parallel and the CPU reference draws exactly the same ones (up to the
// last bit of logf / cosf, which may differ between host and device libraries).
#pragma once

#include <cstdint>

#include "model/host_device.hpp"

#if !defined(__CUDACC__)
#include <cmath>
#endif

namespace ub {

UB_HD uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// 64 random bits for element i of stream `seed`.
UB_HD uint64_t random_bits(uint64_t seed, uint64_t i) { return splitmix64(seed ^ splitmix64(i)); }

// Standard normal by Box-Muller from the 64 bits of element i (24-bit uniforms).
UB_HD float normal_at(uint64_t seed, uint64_t i) {
  const uint64_t h = random_bits(seed, i);
  const float u1 = (static_cast<float>(h >> 40) + 1.0f) * (1.0f / 16777217.0f);  // (0, 1]
  const float u2 = static_cast<float>(h & 0xFFFFFF) * (1.0f / 16777216.0f);       // [0, 1)
#if defined(__CUDA_ARCH__)
  return sqrtf(-2.0f * logf(u1)) * cosf(6.28318530717958647692f * u2);
#else
  return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.28318530717958647692f * u2);
#endif
}

}  // namespace ub
