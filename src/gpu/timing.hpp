// The timing protocol (nvbench's, in small): warm up by time; before each sample an untimed
// `prepare` (L2 flush, re-randomised output); CUDA events around the work; samples enqueued in
// batches and read after one synchronisation; stop when the median's 95% interval is within
// `target_noise` of it and `min_samples` / `min_seconds` are met, or at `max_samples` /
// `max_seconds`, or when interrupted. The stop reason travels with the result.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "core/statistics.hpp"
#include "gpu/cuda_raii.hpp"

namespace ub::gpu {

struct TimingPolicy {
  int min_samples = 10;
  int max_samples = 500;
  double min_seconds = 0.0;   // of measured GPU time
  double max_seconds = 2.0;   // of wall time
  double target_noise = 0.005;
  int batch = 10;
};

// Exactly `n` samples in one batch, whatever their noise: for comparing candidate algorithms on
// their first use (autotuning), where a handful of runs is what the choice may cost.
inline TimingPolicy fixed_samples(int n) {
  TimingPolicy p;
  p.min_samples = p.max_samples = p.batch = n;
  return p;
}

struct Timing {
  std::vector<double> ms;
  Summary summary;
  std::string stop_reason;  // "noise", "max_samples", "max_seconds", "interrupted"
};

// Evicts the L2 cache between samples by writing a buffer larger than it (256 MiB at least,
// the largest last-level cache in the catalog, as the peer mamf-finder does).
class L2Flusher {
 public:
  explicit L2Flusher(size_t l2_bytes);
  void flush(cudaStream_t s) const;

 private:
  DeviceBuffer buffer_;
};

using Work = std::function<void(cudaStream_t)>;

// Runs `work` back to back for `seconds` of wall time (clocks and power settle).
void warm_up(cudaStream_t s, const Work& work, double seconds);

Timing time_samples(cudaStream_t s, const Work& prepare, const Work& work, const TimingPolicy& p,
                    const std::atomic<bool>* interrupted = nullptr);

}  // namespace ub::gpu
