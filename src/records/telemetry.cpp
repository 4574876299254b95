// Telemetry summaries; see telemetry.hpp.
#include "records/telemetry.hpp"

#include <algorithm>

namespace ub {

namespace {
const std::pair<uint64_t, const char*> kNames[] = {
    {clock_reason::gpu_idle, "gpu_idle"},
    {clock_reason::applications_clocks, "applications_clocks"},
    {clock_reason::sw_power_cap, "sw_power_cap"},
    {clock_reason::hw_slowdown, "hw_slowdown"},
    {clock_reason::sync_boost, "sync_boost"},
    {clock_reason::sw_thermal, "sw_thermal"},
    {clock_reason::hw_thermal, "hw_thermal"},
    {clock_reason::hw_power_brake, "hw_power_brake"},
    {clock_reason::display_clocks, "display_clocks"}};
}  // namespace

std::vector<std::string> clock_reason_names(uint64_t mask) {
  std::vector<std::string> out;
  for (const auto& [bit, name] : kNames) {
    if (mask & bit) out.emplace_back(name);
  }
  return out;
}

uint64_t clock_reason_mask(const std::vector<std::string>& names) {
  uint64_t mask = 0;
  for (const std::string& n : names) {
    for (const auto& [bit, name] : kNames) {
      if (n == name) mask |= bit;
    }
  }
  return mask;
}

TelemetrySummary TelemetrySummary::of(const std::vector<TelemetrySample>& s, double power_limit_w) {
  TelemetrySummary t;
  t.available = true;
  t.power_limit_w = power_limit_w;
  t.samples = s.size();
  if (s.empty()) return t;
  t.sm_clock_min = s.front().sm_clock_mhz;
  double clock_sum = 0, power_sum = 0;
  for (const TelemetrySample& x : s) {
    t.sm_clock_min = std::min(t.sm_clock_min, x.sm_clock_mhz);
    t.sm_clock_max = std::max(t.sm_clock_max, x.sm_clock_mhz);
    t.mem_clock_mhz = std::max(t.mem_clock_mhz, x.mem_clock_mhz);
    t.power_max_w = std::max(t.power_max_w, x.power_w);
    t.temperature_max_c = std::max(t.temperature_max_c, x.temperature_c);
    t.reasons |= x.reasons;
    clock_sum += x.sm_clock_mhz;
    power_sum += x.power_w;
  }
  t.sm_clock_mean = clock_sum / static_cast<double>(s.size());
  t.power_mean_w = power_sum / static_cast<double>(s.size());
  t.window_s = s.back().t_s - s.front().t_s;
  if (s.size() >= 2 && t.window_s > 0) {
    double joules = 0;
    for (size_t i = 1; i < s.size(); ++i) joules += (s[i].power_w + s[i - 1].power_w) / 2 * (s[i].t_s - s[i - 1].t_s);
    t.energy_j = joules;
    t.energy_source = kEnergyFromPower;
  }
  return t;
}

nlohmann::json TelemetrySummary::to_json() const {
  if (!available) return {{"available", false}};
  nlohmann::json j = {{"available", true},
          {"samples", samples},
          {"sm_clock_mhz", {{"min", sm_clock_min}, {"mean", sm_clock_mean}, {"max", sm_clock_max}}},
          {"mem_clock_mhz", mem_clock_mhz},
          {"power_w", {{"mean", power_mean_w}, {"max", power_max_w}, {"limit", power_limit_w}}},
          {"temperature_max_c", temperature_max_c},
          {"clock_event_reasons", clock_reason_names(reasons)},
          {"throttled", throttled()},
          {"window_s", window_s}};
  if (energy_j) j["energy_j"] = *energy_j, j["energy_source"] = energy_source;
  return j;
}

}  // namespace ub
