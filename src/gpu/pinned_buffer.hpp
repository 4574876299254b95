// Page-locked host memory (cudaHostAlloc): what the GPU copies to and from at the link's full
// speed and asynchronously, for the offloaded optimizer's state and the offloaded checkpoints.
// How much the host can pin is checked before (base/host_memory.hpp); a failed allocation is
// still an error naming what it was for.
#pragma once

#include <cstddef>
#include <string>

namespace ub::gpu {

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  // `what` names the buffer in the error; `zeroed`: cleared after allocation.
  PinnedBuffer(size_t bytes, const std::string& what, bool zeroed = true);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  template <class T>
  T* as() const { return static_cast<T*>(p_); }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace ub::gpu
