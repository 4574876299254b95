// One device allocation for everything the training step keeps, planned up front so the peak is
// known before the first kernel runs and stays the same every step. Two regions:
//
//   persistent: named buffers requested before commit() (weights, optimizer state, gradients,
//               saved activations), each 256-byte aligned;
//   scratch:    a stack of temporaries inside a fixed capacity; a Scratch scope takes from it and
//               gives everything back when it ends, so phases reuse the same bytes.
//
// A request the device cannot satisfy is an OutOfMemory naming what was being allocated.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace ub::gpu {

class OutOfMemory : public WorkError {
 public:
  OutOfMemory(const std::string& what, size_t bytes);
  const std::string& what_allocated() const { return what_; }
  size_t bytes() const { return bytes_; }

 private:
  std::string what_;
  size_t bytes_;
};

// True for a CUDA / cuDNN / cuBLASLt error message that reports an allocation failure.
[[nodiscard]] bool is_out_of_memory_message(const std::string& message);

class DeviceArena {
 public:
  DeviceArena() = default;
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // Before commit: a persistent buffer of `bytes`; `*slot` is set by commit().
  void request(const std::string& what, size_t bytes, void** slot);
  template <class T>
  void request(const std::string& what, size_t count, T** slot) {
    request(what, count * sizeof(T), reinterpret_cast<void**>(slot));
  }
  // Allocates persistent + scratch_bytes at once; throws OutOfMemory naming the largest parts.
  void commit(size_t scratch_bytes);

  size_t persistent_bytes() const { return persistent_; }
  size_t scratch_capacity() const { return scratch_capacity_; }
  size_t scratch_in_use() const { return scratch_top_; }
  size_t scratch_peak() const { return scratch_peak_; }
  size_t reserved() const { return persistent_ + scratch_capacity_; }

  class Scratch {
   public:
    explicit Scratch(DeviceArena& a) : a_(a), mark_(a.scratch_top_) {}
    ~Scratch() { a_.scratch_top_ = mark_; }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    void* take(const char* what, size_t bytes);
    template <class T>
    T* take(const char* what, size_t count) {
      return static_cast<T*>(take(what, count * sizeof(T)));
    }

   private:
    DeviceArena& a_;
    size_t mark_;
  };

 private:
  struct Request {
    std::string what;
    size_t bytes;
    void** slot;
  };
  std::vector<Request> requests_;
  char* base_ = nullptr;
  size_t persistent_ = 0, scratch_capacity_ = 0, scratch_top_ = 0, scratch_peak_ = 0;
};

inline constexpr size_t kArenaAlign = 256;
constexpr size_t arena_round(size_t bytes) { return (bytes + kArenaAlign - 1) / kArenaAlign * kArenaAlign; }

}  // namespace ub::gpu
