// A training step's wall time split into buckets on one clock (the method of bench_decompose.py,
// the ml-engineering guide's decomposition): inside the step's window, the time some compute
// kernel runs is shared among the compute buckets by their kernel time (scaled down where kernels
// of several streams overlap, so the shares add up to the busy time); memory copies and
// collectives count where no compute kernel runs (their exposed part); idle is the rest. The
// buckets add up to the step by construction. Collectives running under compute are reported
// beside: their total and overlapped time.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/decompose/kernel_classes.hpp"

namespace ub::trace {

struct GpuActivity {
  double start = 0, end = 0;  // microseconds
  Bucket bucket = Bucket::other;
  uint32_t name = 0;  // index into the caller's name table
  int32_t stream = -1;
};

struct StepWindow {
  std::string name;
  double start = 0, end = 0;  // microseconds
};

struct StepDecomposition {
  std::string name;
  double step_us = 0;
  std::array<double, kBuckets> us{};         // by Bucket; sums to step_us
  std::array<double, kBuckets> kernel_us{};  // the activities' own durations, clipped (idle: 0)
  double communication_us = 0, communication_overlapped_us = 0;
  double compute_kernel_us = 0;  // compute kernels' summed durations (before the overlap scaling)
  size_t activities = 0;

  double of(Bucket b) const { return us[static_cast<size_t>(b)]; }
};

// `acts`: the activities of one device, any order; those outside the window are ignored and the
// others clipped to it. `covering`: by Bucket, how many more activities run over the whole window
// (counted, not listed: a trace of long overlapping kernels would list each in every step).
StepDecomposition decompose_step(const StepWindow& window, const std::vector<GpuActivity>& acts,
                                 const std::array<uint32_t, kBuckets>& covering = {});

}  // namespace ub::trace
