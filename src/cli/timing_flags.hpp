// The flags of a benchmark's timing, the same on every measuring command.
#pragma once

#include <CLI/CLI.hpp>

#include "records/timing_policy.hpp"

namespace ub::cli {

// --warmup-s, --max-seconds, --min-samples, --max-samples and --noise, bound to `t` with its
// defaults shown; validated with the configuration (BenchmarkTiming::validate).
void add_timing_flags(CLI::App& cmd, BenchmarkTiming& t);

}  // namespace ub::cli
