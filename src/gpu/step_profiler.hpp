// Where a training step's time goes: each operation the engine runs (a GEMM, attention, a norm,
// the optimizer, ...) is tagged with its class, a label and the FLOPs or bytes it does, and the
// kernels launched inside it are recorded by CUPTI (gpu/activity_trace.hpp) with their own start
// and end on the GPU's clock: an operation's time is its kernels' time, not the span between two
// events (which counts launch gaps), and every kernel of the step is on one timeline for the
// decomposition (measure/engine_decomposition.hpp). With no profiler attached the engine records
// nothing and CUPTI is off.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/activity_trace.hpp"

namespace ub::gpu {

class StepProfiler {
 public:
  struct Op {
    std::string cls, label;
    double flop = 0, bytes = 0;
    double ms = 0;       // its kernels' summed time
    size_t kernels = 0;  // how many ran
    int step = 0;        // which profiled step it ran in
  };
  struct Step {
    uint64_t start = 0, end = 0;  // nanoseconds, on the activity records' clock
    double ms() const { return static_cast<double>(end - start) / 1e6; }
  };
  struct Profile {
    std::vector<Op> ops;
    std::vector<Step> steps;
    ActivityLog log;  // each record's `operation` is 1 + its op's index in `ops` (0: launched outside any)
  };

  // Marks the start / end of an operation; `s` is the stream it runs on.
  void begin(const std::string& cls, const std::string& label, double flop, double bytes, cudaStream_t s);
  void end(cudaStream_t s);
  // Around each profiled step: the stream is synchronised and the clock read, so the step's window
  // holds its kernels and whatever idle time the GPU had between them.
  void step_begin(cudaStream_t s);
  void step_end(cudaStream_t s);
  // After the last step_end: every operation with its kernels' time, the steps, the raw records.
  Profile collect();

 private:
  ActivityTrace trace_;
  std::vector<Op> ops_;
  std::vector<Step> steps_;
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
