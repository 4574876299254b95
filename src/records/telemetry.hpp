// What the GPU was doing while a measurement ran: clocks, power, temperature and the
// clocks-event-reasons bitmask, summarised over the samples taken during it. Plain data (the
// NVML sampler in src/gpu fills it), so every record can say whether it ran throttled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ub {

// NVML clocks-event-reason bits (nvmlClocksEventReason*), as the driver reports them.
namespace clock_reason {
inline constexpr uint64_t gpu_idle = 0x1;
inline constexpr uint64_t applications_clocks = 0x2;
inline constexpr uint64_t sw_power_cap = 0x4;
inline constexpr uint64_t hw_slowdown = 0x8;
inline constexpr uint64_t sync_boost = 0x10;
inline constexpr uint64_t sw_thermal = 0x20;
inline constexpr uint64_t hw_thermal = 0x40;
inline constexpr uint64_t hw_power_brake = 0x80;
inline constexpr uint64_t display_clocks = 0x100;
// The reasons that mean "slower than it could run": power cap, thermal, hardware slowdown.
inline constexpr uint64_t throttling = sw_power_cap | hw_slowdown | sw_thermal | hw_thermal |
                                       hw_power_brake;
}  // namespace clock_reason

// Names of the set bits ("sw_power_cap", ...), and the mask back from names (unknown names: no bit).
std::vector<std::string> clock_reason_names(uint64_t mask);
uint64_t clock_reason_mask(const std::vector<std::string>& names);

struct TelemetrySample {
  double sm_clock_mhz = 0, mem_clock_mhz = 0, power_w = 0, temperature_c = 0;
  uint64_t reasons = 0;
  double t_s = 0;  // when, in seconds from the window's start
};

// Where a window's energy comes from: the driver's energy counter (millijoules since it loaded,
// on Volta and later) read at both ends, or the sampled power integrated over the samples' times
// (trapezoids) where there is no counter.
inline constexpr const char* kEnergyFromCounter = "NVML energy counter";
inline constexpr const char* kEnergyFromPower = "sampled power";

struct TelemetrySummary {
  bool available = false;  // false: no NVML (the record says "unknown", not "not throttled")
  size_t samples = 0;
  double sm_clock_min = 0, sm_clock_mean = 0, sm_clock_max = 0, mem_clock_mhz = 0;
  double power_mean_w = 0, power_max_w = 0, power_limit_w = 0, temperature_max_c = 0;
  uint64_t reasons = 0;  // OR over the samples
  double window_s = 0;              // from the first sample to the last
  std::optional<double> energy_j;   // over the window
  std::string energy_source;        // kEnergyFromCounter or kEnergyFromPower

  // The window's mean power: its energy over its time where both are known, else the samples' mean.
  double mean_power_w() const { return energy_j && window_s > 0 ? *energy_j / window_s : power_mean_w; }
  bool throttled() const { return (reasons & clock_reason::throttling) != 0; }
  static TelemetrySummary of(const std::vector<TelemetrySample>& s, double power_limit_w);
  nlohmann::json to_json() const;
};

}  // namespace ub
