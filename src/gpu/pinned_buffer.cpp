// Page-locked host memory; see pinned_buffer.hpp.
#include "gpu/pinned_buffer.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstring>

#include "base/error.hpp"
#include "base/units.hpp"

namespace ub::gpu {

PinnedBuffer::PinnedBuffer(size_t bytes, const std::string& what, bool zeroed) : bytes_(bytes) {
  if (bytes == 0) return;
  const cudaError_t e = cudaHostAlloc(&p_, bytes, cudaHostAllocDefault);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    p_ = nullptr;
    throw WorkError(fmt::format("out of host memory: {:.2f} GiB of pinned memory for {} ({})", to_gib(bytes), what,
                                cudaGetErrorString(e)));
  }
  if (zeroed) std::memset(p_, 0, bytes);
}

PinnedBuffer::~PinnedBuffer() {
  if (p_) cudaFreeHost(p_);
}

}  // namespace ub::gpu
