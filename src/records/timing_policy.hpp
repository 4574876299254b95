// How long a measurement is sampled (nvbench's policy, in small): at least `min_samples` samples
// and `min_seconds` of measured GPU time, then stop when the median's 95% interval is within
// `target_noise` of it, or at `max_samples` / `max_seconds` of wall time. `batch` samples are
// enqueued before one synchronisation. The first `discard` samples run and are reported but stay
// out of the statistics and the counts (a training run's warm-up steps). Plain data: the GPU
// timing loop (gpu/timing.hpp) follows it, configurations record it.
#pragma once

#include <nlohmann/json.hpp>

namespace ub {

class Fields;

struct TimingPolicy {
  int min_samples = 10;
  int max_samples = 500;
  double min_seconds = 0.0;   // of measured GPU time
  double max_seconds = 2.0;   // of wall time
  double target_noise = 0.005;
  int batch = 10;
  int discard = 0;
};

// Exactly `n` samples in one batch, whatever their noise: for comparing candidate algorithms on
// their first use (autotuning), where a handful of runs is what the choice may cost.
TimingPolicy fixed_samples(int n);

// A benchmark's timing: seconds of warm-up before its first point, then every timed unit sampled
// under `samples`. Written into the configuration record as warmup_s, min_samples, max_samples,
// max_seconds and target_noise.
struct BenchmarkTiming {
  double warmup_s = 2;
  TimingPolicy samples;
  // UsageError naming the option (--min-samples, --noise, --warmup-s, --max-seconds).
  void validate() const;
};

void put_timing(nlohmann::json& config, const BenchmarkTiming& t);
BenchmarkTiming read_timing(const Fields& config, const BenchmarkTiming& defaults);

}  // namespace ub
