// One stream's waits for work on others, each between two timing events, so a step can say how
// long its compute stream stood still for communication or copies: the exposed time, the part
// not hidden behind compute. The event pairs are made the first time a step needs them and reused
// by the steps after it.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "gpu/check.hpp"
#include "gpu/cuda_raii.hpp"

namespace ub::gpu {

class TimedWaits {
 public:
  struct Pair {
    Event before, after;
  };

  // A new step: its waits start from none.
  void begin_step() { used_ = 0; }
  // `waiter` waits for `e`, timed.
  void wait(cudaStream_t waiter, cudaEvent_t e) {
    Pair& p = next();
    p.before.record(waiter);
    UB_CUDA_CHECK(cudaStreamWaitEvent(waiter, e));
    p.after.record(waiter);
  }
  // The step's next pair, for a wait the caller brackets itself.
  Pair& next() {
    if (used_ == pairs_.size()) pairs_.push_back(std::make_unique<Pair>());
    return *pairs_[used_++];
  }
  // Milliseconds of this step's waits (every event recorded must have completed).
  double sum_ms() const {
    double ms = 0;
    for (size_t i = 0; i < used_; ++i) ms += pairs_[i]->after.since(pairs_[i]->before);
    return ms;
  }

 private:
  std::vector<std::unique_ptr<Pair>> pairs_;
  size_t used_ = 0;
};

}  // namespace ub::gpu
