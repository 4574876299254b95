// The training engine's arena; see device_arena.hpp.
#include "gpu/device_arena.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>

#include "base/units.hpp"
#include "gpu/check.hpp"

namespace ub::gpu {

OutOfMemory::OutOfMemory(const std::string& what, size_t bytes)
    : WorkError(fmt::format("out of memory allocating {} ({:.2f} GiB)", what, to_gib(bytes))), what_(what), bytes_(bytes) {}

bool is_out_of_memory_message(const std::string& m) {
  return m.find("out of memory") != std::string::npos || m.find("CUDNN_STATUS_ALLOC_FAILED") != std::string::npos ||
         m.find("CUBLAS_STATUS_ALLOC_FAILED") != std::string::npos;
}

DeviceArena::~DeviceArena() {
  if (base_) cudaFree(base_);
}

void DeviceArena::request(const std::string& what, size_t bytes, void** slot) {
  if (base_) throw WorkError("DeviceArena: request after commit (" + what + ")");
  requests_.push_back({what, bytes, slot});
  persistent_ += arena_round(bytes);
}

void DeviceArena::commit(size_t scratch_bytes) {
  scratch_capacity_ = arena_round(scratch_bytes);
  const size_t total = persistent_ + scratch_capacity_;
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, total);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    std::vector<Request> big = requests_;
    std::sort(big.begin(), big.end(), [](const Request& a, const Request& b) { return a.bytes > b.bytes; });
    std::string parts;
    for (size_t i = 0; i < std::min<size_t>(3, big.size()); ++i) {
      parts += fmt::format("{}{} {:.2f} GiB", i ? ", " : "", big[i].what, to_gib(big[i].bytes));
    }
    size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    throw OutOfMemory(fmt::format("the training arena: {} buffers + {:.2f} GiB scratch, largest {}; {:.2f} GiB free "
                                  "on the device ({})", requests_.size(), to_gib(scratch_capacity_), parts, to_gib(free_b),
                                  cudaGetErrorString(e)),
                      total);
  }
  base_ = static_cast<char*>(p);
  size_t at = 0;
  for (const Request& r : requests_) {
    *r.slot = base_ + at;
    at += arena_round(r.bytes);
  }
}

void* DeviceArena::Scratch::take(const char* what, size_t bytes) {
  const size_t need = arena_round(bytes);
  if (a_.scratch_top_ + need > a_.scratch_capacity_) {
    throw OutOfMemory(fmt::format("{} in the scratch region ({} of {} bytes in use; the engine's scratch plan is too "
                                  "small)", what, a_.scratch_top_, a_.scratch_capacity_), bytes);
  }
  void* p = a_.base_ + a_.persistent_ + a_.scratch_top_;
  a_.scratch_top_ += need;
  a_.scratch_peak_ = std::max(a_.scratch_peak_, a_.scratch_top_);
  return p;
}

}  // namespace ub::gpu
