// Time statistics and telemetry blocks; see timing_record.hpp.
#include "records/timing_record.hpp"

#include <cmath>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/text.hpp"

namespace ub {

using nlohmann::json;

void to_json(json& j, const TimeStats& t) {
  const Summary& s = t.ms;
  j = {{"n", s.n},           {"mean", s.mean},     {"median", s.median},
       {"min", s.min},       {"max", s.max},       {"q1", s.q1},
       {"q3", s.q3},         {"stddev", s.stddev}, {"median_low", s.median_low},
       {"median_high", s.median_high}, {"stop", t.stop}};
}

TimeStats read_time_stats(const Fields& f) {
  TimeStats t;
  Summary& s = t.ms;
  s.n = static_cast<size_t>(f.count("n"));
  s.median = f.number("median");
  t.written = 0;
  const auto read = [&](const char* key, unsigned bit, double fallback) {
    const std::optional<double> v = f.optional_number(key);
    if (v) t.written |= bit;
    return v.value_or(fallback);
  };
  s.mean = read("mean", TimeStats::kMean, s.median);
  s.min = read("min", TimeStats::kMin, s.median);
  s.max = read("max", TimeStats::kMax, s.median);
  s.q1 = read("q1", TimeStats::kQ1, s.median);
  s.q3 = read("q3", TimeStats::kQ3, s.median);
  s.stddev = read("stddev", TimeStats::kStddev, 0);
  s.median_low = read("median_low", TimeStats::kMedianLow, s.median);
  s.median_high = read("median_high", TimeStats::kMedianHigh, s.median);
  t.stop = f.string_or("stop", "");
  // A summary whose order statistics are out of order was not computed from samples: every
  // interval read from it would be upside down (a median above its maximum).
  const bool ordered = s.min >= 0 && s.min <= s.median_low && s.median_low <= s.median && s.median <= s.median_high &&
                       s.median_high <= s.max && s.min <= s.q1 && s.q1 <= s.q3 && s.q3 <= s.max && s.stddev >= 0 &&
                       std::isfinite(s.max) && std::isfinite(s.mean) && std::isfinite(s.stddev);
  if (!ordered) {
    throw WorkError(fmt::format("{}: time summary out of order (min {} <= median_low {} <= median {} <= median_high "
                                "{} <= max {}, q1 {} <= q3 {}, stddev {} >= 0 must hold)",
                                f.where(), s.min, s.median_low, s.median, s.median_high, s.max, s.q1, s.q3, s.stddev));
  }
  return t;
}

void to_json(json& j, const TelemetrySummary& t) { j = t.to_json(); }

TelemetrySummary read_telemetry(const Fields& f) {
  TelemetrySummary t;
  t.available = f.boolean_or("available", false);
  if (!t.available) return t;
  t.samples = static_cast<size_t>(f.optional_count("samples").value_or(0));
  if (auto c = f.optional_object("sm_clock_mhz")) {
    t.sm_clock_min = c->optional_number("min").value_or(0);
    t.sm_clock_mean = c->optional_number("mean").value_or(0);
    t.sm_clock_max = c->optional_number("max").value_or(0);
  }
  t.mem_clock_mhz = f.optional_number("mem_clock_mhz").value_or(0);
  if (auto p = f.optional_object("power_w")) {
    t.power_mean_w = p->optional_number("mean").value_or(0);
    t.power_max_w = p->optional_number("max").value_or(0);
    t.power_limit_w = p->optional_number("limit").value_or(0);
  }
  t.temperature_max_c = f.optional_number("temperature_max_c").value_or(0);
  t.window_s = f.optional_number("window_s").value_or(0);
  t.energy_j = f.optional_number("energy_j");
  if (t.energy_j) t.energy_source = f.string_or("energy_source", kEnergyFromPower);
  if (f.raw().contains("clock_event_reasons") && f.raw().at("clock_event_reasons").is_array()) {
    std::vector<std::string> reasons;
    for (const nlohmann::json& r : f.raw().at("clock_event_reasons")) {
      if (!r.is_string()) {
        throw WorkError(fmt::format("{}: field 'clock_event_reasons': a list of names, found {}", f.where(),
                                    printable(r.dump(), false)));
      }
      reasons.push_back(r.get<std::string>());
    }
    t.reasons = clock_reason_mask(reasons);
  }
  return t;
}

}  // namespace ub
