// Standard-normal values from a seed, for the CPU references' tests (attention, the MoE layer):
// the same seed gives the same values, so a failure repeats.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace ub {

inline std::vector<double> randn(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(0.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

}  // namespace ub
