// Timing flags; see timing_flags.hpp.
#include "cli/timing_flags.hpp"

namespace ub::cli {

void add_timing_flags(CLI::App& cmd, BenchmarkTiming& t) {
  cmd.add_option("--warmup-s", t.warmup_s, "Seconds of GPU warm-up before the first timing")->capture_default_str();
  cmd.add_option("--max-seconds", t.samples.max_seconds, "Wall-time limit of each timing")->capture_default_str();
  cmd.add_option("--min-samples", t.samples.min_samples, "Fewest timed samples")->capture_default_str();
  cmd.add_option("--max-samples", t.samples.max_samples, "Most timed samples")->capture_default_str();
  cmd.add_option("--noise", t.samples.target_noise, "Stop when the median's 95% interval is within this fraction")
      ->capture_default_str();
}

}  // namespace ub::cli
