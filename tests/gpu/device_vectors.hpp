// Host vectors to and from device buffers for the GPU tests that check a kernel against its CPU
// reference: random bf16-exact values, uploads and downloads in bf16, fp32 or as they are, and
// the relative L2 error (infinite when anything is not finite: NaN never passes).
#pragma once

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu/cuda_raii.hpp"
#include "model/counter_rng.hpp"

namespace ub::gpu {

using Vec = std::vector<double>;

inline Vec random_vec(size_t n, uint64_t seed, double scale = 1.0) {
  Vec v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>(__bfloat162float(__float2bfloat16(normal_at(seed, i) * static_cast<float>(scale))));
  return v;
}

inline DeviceBuffer upload_bf16(const Vec& v) {
  std::vector<__nv_bfloat16> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = __float2bfloat16(static_cast<float>(v[i]));
  DeviceBuffer b(h.size() * sizeof(__nv_bfloat16));
  UB_CUDA_CHECK(cudaMemcpy(b.get(), h.data(), b.bytes(), cudaMemcpyHostToDevice));
  return b;
}
inline DeviceBuffer upload_f32(const Vec& v) {
  std::vector<float> h(v.begin(), v.end());
  DeviceBuffer b(h.size() * sizeof(float));
  UB_CUDA_CHECK(cudaMemcpy(b.get(), h.data(), b.bytes(), cudaMemcpyHostToDevice));
  return b;
}
template <class T>
DeviceBuffer upload(const std::vector<T>& v) {
  DeviceBuffer b(v.size() * sizeof(T));
  UB_CUDA_CHECK(cudaMemcpy(b.get(), v.data(), b.bytes(), cudaMemcpyHostToDevice));
  return b;
}
inline Vec download_bf16(const DeviceBuffer& b, size_t n) {
  std::vector<__nv_bfloat16> h(n);
  UB_CUDA_CHECK(cudaMemcpy(h.data(), b.get(), n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
  return Vec(h.begin(), h.end());
}
inline Vec download_f32(const DeviceBuffer& b, size_t n) {
  std::vector<float> h(n);
  UB_CUDA_CHECK(cudaMemcpy(h.data(), b.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
  return Vec(h.begin(), h.end());
}

// ||got - ref|| / ||ref||; infinity when anything is not finite.
inline double rel_l2(const Vec& got, const Vec& ref) {
  if (got.size() != ref.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

}  // namespace ub::gpu
