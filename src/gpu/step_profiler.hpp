// Where a training step's time goes: CUDA events around each operation, tagged with its class
// (gemm, attention, norm/elementwise, cross-entropy, optimizer, other) and a label, plus the
// FLOPs or bytes it does, so each class can be set against its ceiling (GEMM and attention in
// TFLOPS, the rest in GB/s of HBM traffic). Events are read after the step has finished; with no
// profiler attached the engine records nothing.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

namespace ub::gpu {

class StepProfiler {
 public:
  struct Op {
    std::string cls, label;
    double flop = 0, bytes = 0;
    float ms = 0;
  };
  StepProfiler() = default;
  ~StepProfiler();
  StepProfiler(const StepProfiler&) = delete;
  StepProfiler& operator=(const StepProfiler&) = delete;

  // Marks the start / end of an operation on `s`.
  void begin(const std::string& cls, const std::string& label, double flop, double bytes, cudaStream_t s);
  void end(cudaStream_t s);
  // After the stream has finished: every operation with its time, in order.
  std::vector<Op> collect();

 private:
  struct Pending {
    Op op;
    cudaEvent_t start = nullptr, stop = nullptr;
  };
  cudaEvent_t event();  // a new event, destroyed with the profiler
  std::vector<Pending> ops_;
  std::vector<cudaEvent_t> events_;
};

// RAII: begin in the constructor, end in the destructor; nothing without a profiler.
class ProfileScope {
 public:
  ProfileScope(StepProfiler* p, const char* cls, const std::string& label, double flop, double bytes, cudaStream_t s)
      : p_(p), s_(s) {
    if (p_) p_->begin(cls, label, flop, bytes, s);
  }
  ~ProfileScope() {
    if (p_) p_->end(s_);
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  StepProfiler* p_;
  cudaStream_t s_;
};

}  // namespace ub::gpu
