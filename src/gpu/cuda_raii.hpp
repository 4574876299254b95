// RAII owners for CUDA resources: device memory, streams, events. Copies are deleted, moves
// transfer ownership; destructors never throw (a failed free at exit is not worth a crash).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "gpu/check.hpp"

namespace ub::gpu {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes > 0) UB_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_) cudaFree(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }

  void* get() const { return ptr_; }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

class Stream {
 public:
  Stream() { UB_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const { UB_CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { UB_CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s) const { UB_CUDA_CHECK(cudaEventRecord(e_, s)); }
  // Milliseconds from `start` to this event (both recorded and completed).
  float since(const Event& start) const {
    float ms = 0;
    UB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
    return ms;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

// Work captured once from a stream into a CUDA graph and replayed: one launch for many kernels
// (the launches' own cost leaves the timed region).
class Graph {
 public:
  template <class Capture>
  Graph(cudaStream_t s, Capture capture) {
    cudaGraph_t graph = nullptr;
    UB_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    capture(s);
    UB_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    const cudaError_t rc = cudaGraphInstantiate(&exec_, graph, 0);
    cudaGraphDestroy(graph);
    UB_CUDA_CHECK(rc);
  }
  ~Graph() {
    if (exec_) cudaGraphExecDestroy(exec_);
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  void launch(cudaStream_t s) const { UB_CUDA_CHECK(cudaGraphLaunch(exec_, s)); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace ub::gpu
