// The two blocks every measurement record carries: the statistics of its timed samples
// (`time_ms`: n, mean, median, min, max, q1, q3, stddev and the median's 95% interval, with the
// reason the sampling stopped) and the telemetry sampled while it ran (`telemetry`).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/statistics.hpp"
#include "records/fields.hpp"
#include "records/telemetry.hpp"

namespace ub {

struct TimeStats {
  Summary ms;
  std::string stop;  // noise, max_samples, max_seconds, interrupted
  // Which of the optional figures the record wrote (a bit each, kMean ... kMedianHigh); those it
  // left out are read as the median (stddev as 0).
  enum Written : unsigned { kMean = 1, kStddev = 2, kMin = 4, kMax = 8, kQ1 = 16, kQ3 = 32, kMedianLow = 64, kMedianHigh = 128 };
  unsigned written = 255;
};

void to_json(nlohmann::json& j, const TimeStats& t);
TimeStats read_time_stats(const Fields& f);

void to_json(nlohmann::json& j, const TelemetrySummary& t);
TelemetrySummary read_telemetry(const Fields& f);

}  // namespace ub
