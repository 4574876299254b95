// `decompose` of a torch.profiler trace: the trace streamed once (records/trace/kineto_trace.hpp),
// its GPU kernels, copies and collectives classified (kernel_classes.hpp) and kept as compact
// intervals, the steps found from the ProfilerStep annotations (or other annotations named by a
// pattern, or the GPU timeline cut into --steps equal parts), and every step of every device
// decomposed (step_decomposition.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/decompose/kernel_classes.hpp"
#include "analysis/decompose/step_decomposition.hpp"
#include "records/decomposition_records.hpp"

namespace ub::trace {

struct DecomposeOptions {
  std::string step_pattern = "^ProfilerStep#";  // annotations that are steps (extended regex)
  std::optional<int> steps;                     // without such annotations: equal parts of the timeline
};

struct NameTime {
  std::string name;
  double us = 0;
  size_t count = 0;
};

struct TraceDecomposition {
  std::string path, gpu;  // gpu: the device's name from the trace, "" when it does not say
  int64_t device = 0;
  std::optional<int64_t> rank, world_size;  // the trace's distributedInfo, where it has one
  std::string source = kTraceSource;  // kEngineSource for our engine's step (records/decomposition_records.hpp)
  std::string steps_from;  // how the steps were found, in words
  std::vector<StepDecomposition> steps;
  std::vector<NameTime> unclassified;  // kernels no rule matched, most time first
  uint64_t events = 0, bytes = 0;
  // The GPU's activities as a whole (how many, the first start, the last end, their summed
  // time): two ranks never run theirs at the same instants, so two traces that agree here are
  // one measurement (a copy compressed or written again), whatever their bytes.
  struct Activity {
    size_t count = 0;
    double first = 0, last = 0, busy = 0;
    bool operator==(const Activity&) const = default;
  } activity;

  // The step with the median wall time (the lower one of an even count) among the steps in which
  // the GPU ran something (all of them when none did).
  const StepDecomposition& median_step() const;
};

// One decomposition per GPU the trace holds. WorkError when it holds no GPU activity, or no step.
std::vector<TraceDecomposition> decompose_trace(const std::string& path, KernelClasses& classes,
                                                const DecomposeOptions& options);

// The trace files named: files as they are, a folder's *.json and *.json.gz (one per rank),
// sorted. UsageError for a path that does not exist, a folder without traces, or one trace
// given twice (the same file, or the same bytes in two files).
std::vector<std::string> trace_files(const std::vector<std::string>& inputs);

}  // namespace ub::trace
