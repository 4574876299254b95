// The timing protocol (nvbench's, in small): warm up by time; before each sample an untimed
// `prepare` (L2 flush, re-randomised output); CUDA events around the work; samples enqueued in
// batches and read after one synchronisation; stop by the policy (records/timing_policy.hpp: the
// median's 95% interval within `target_noise` once `min_samples` / `min_seconds` are met, or
// `max_samples` / `max_seconds`), or when interrupted. The stop reason travels with the result.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "base/statistics.hpp"
#include "gpu/cuda_raii.hpp"
#include "records/timing_policy.hpp"

namespace ub::gpu {

struct Timing {
  std::vector<double> ms;  // every sample, the discarded first ones included
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

// Called with each sample's index and time once it has been read (after its batch finished), in
// order; what it throws ends the timing.
using SampleHook = std::function<void(int index, double ms)>;
// Ranks of one job must stop sampling together (each sample is a collective): after every batch
// `agree` gets this rank's decision and returns the job's (stop when any rank stops).
using Agreement = std::function<bool(bool stop)>;

Timing time_samples(cudaStream_t s, const Work& prepare, const Work& work, const TimingPolicy& p,
                    const std::atomic<bool>* interrupted = nullptr, const SampleHook& on_sample = {},
                    const Agreement& agree = {});

}  // namespace ub::gpu
