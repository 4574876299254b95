// The number of SMs of the current device, for kernels launched as one wave (a block or a few per
// SM). Cached per thread and device: a worker thread stays on its device, and the attribute query
// must stay out of timed launches.
#pragma once

#include <cuda_runtime.h>

#include "gpu/check.hpp"

namespace ub::gpu {

inline int current_sm_count() {
  thread_local int cached_device = -1, cached_sms = 0;
  int device = 0;
  UB_CUDA_CHECK(cudaGetDevice(&device));
  if (device != cached_device) {
    UB_CUDA_CHECK(cudaDeviceGetAttribute(&cached_sms, cudaDevAttrMultiProcessorCount, device));
    cached_device = device;
  }
  return cached_sms;
}

}  // namespace ub::gpu
