// The NVML sampling thread; see telemetry_sampler.hpp.
#include "gpu/telemetry_sampler.hpp"

#include <chrono>

namespace ub::gpu {

void TelemetrySampler::start() {
  if (!nvml_ || running_) return;
  {
    std::lock_guard lock(mutex_);
    samples_.clear();
    samples_.push_back(nvml_->sample());
  }
  running_ = true;
  thread_ = std::thread([this] {
    while (running_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(period_ms_));
      const TelemetrySample s = nvml_->sample();
      std::lock_guard lock(mutex_);
      samples_.push_back(s);
    }
  });
}

TelemetrySummary TelemetrySampler::stop() {
  if (!nvml_) return TelemetrySummary{};
  if (running_) {
    running_ = false;
    thread_.join();
  }
  std::lock_guard lock(mutex_);
  samples_.push_back(nvml_->sample());
  return TelemetrySummary::of(samples_, nvml_->power_limit_w());
}

}  // namespace ub::gpu
