// Timing policies; see timing_policy.hpp.
#include "records/timing_policy.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "records/fields.hpp"

namespace ub {

TimingPolicy fixed_samples(int n) {
  TimingPolicy p;
  p.min_samples = p.max_samples = p.batch = n;
  return p;
}

void BenchmarkTiming::validate() const {
  if (samples.min_samples < 3) throw UsageError("--min-samples must be at least 3");
  if (samples.max_samples < samples.min_samples) {
    throw UsageError(fmt::format("--max-samples {} is below --min-samples {}", samples.max_samples, samples.min_samples));
  }
  if (!(samples.target_noise > 0 && samples.target_noise < 1)) throw UsageError("--noise must be within (0, 1)");
  if (!(warmup_s >= 0) || !(samples.max_seconds > 0)) throw UsageError("--warmup-s must be >= 0 and --max-seconds > 0");
}

void put_timing(nlohmann::json& config, const BenchmarkTiming& t) {
  config["warmup_s"] = t.warmup_s;
  config["min_samples"] = t.samples.min_samples;
  config["max_samples"] = t.samples.max_samples;
  config["max_seconds"] = t.samples.max_seconds;
  config["target_noise"] = t.samples.target_noise;
}

BenchmarkTiming read_timing(const Fields& config, const BenchmarkTiming& defaults) {
  BenchmarkTiming t = defaults;
  t.warmup_s = config.optional_number("warmup_s").value_or(t.warmup_s);
  t.samples.min_samples = static_cast<int>(config.optional_count("min_samples").value_or(t.samples.min_samples));
  t.samples.max_samples = static_cast<int>(config.optional_count("max_samples").value_or(t.samples.max_samples));
  t.samples.max_seconds = config.optional_number("max_seconds").value_or(t.samples.max_seconds);
  t.samples.target_noise = config.optional_number("target_noise").value_or(t.samples.target_noise);
  return t;
}

}  // namespace ub
