// Moving the engine's buffers between host and device for its callers and tests (parameters,
// gradients, tokens), and the bf16 <-> fp32 conversions on the host those copies need: written
// once for the engine alone and for the data-parallel layer.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "gpu/check.hpp"

namespace ub::gpu {

// `n` elements from the device, after everything queued on the stream (synchronises).
template <class T>
std::vector<T> download(const T* src, size_t n, cudaStream_t s) {
  std::vector<T> host(n);
  UB_CUDA_CHECK(cudaMemcpyAsync(host.data(), src, n * sizeof(T), cudaMemcpyDeviceToHost, s));
  UB_CUDA_CHECK(cudaStreamSynchronize(s));
  return host;
}

// Queues the copy of `src` to the device; `src` must live until the stream has run it.
template <class T>
void upload(T* dst, const std::vector<T>& src, cudaStream_t s) {
  UB_CUDA_CHECK(cudaMemcpyAsync(dst, src.data(), src.size() * sizeof(T), cudaMemcpyHostToDevice, s));
}

inline std::vector<float> widen(const std::vector<__nv_bfloat16>& v) {
  std::vector<float> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](__nv_bfloat16 x) { return __bfloat162float(x); });
  return out;
}

inline std::vector<__nv_bfloat16> to_bf16(const std::vector<float>& v) {
  std::vector<__nv_bfloat16> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](float x) { return __float2bfloat16(x); });
  return out;
}

}  // namespace ub::gpu
