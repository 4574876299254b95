// Samples NVML on a background thread while a measurement runs (every `period_ms`), and
// summarises what it saw. Without NVML it returns an "unavailable" summary and costs nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <mutex>
#include <thread>
#include <vector>

#include "gpu/nvml.hpp"
#include "records/telemetry.hpp"

namespace ub::gpu {

class TelemetrySampler {
 public:
  explicit TelemetrySampler(Nvml* nvml, int period_ms = 20) : nvml_(nvml), period_ms_(period_ms) {}
  ~TelemetrySampler() { stop(); }
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  void start();
  // Stops sampling and returns the summary of this window.
  TelemetrySummary stop();

 private:
  TelemetrySample timed(TelemetrySample s) const;  // stamped with its time in the window

  Nvml* nvml_;
  int period_ms_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::vector<TelemetrySample> samples_;
  std::chrono::steady_clock::time_point started_;
  std::optional<double> energy_at_start_;  // the driver's counter, where it has one
};

}  // namespace ub::gpu
