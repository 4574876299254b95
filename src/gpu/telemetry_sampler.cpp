// The NVML sampling thread; see telemetry_sampler.hpp.
#include "gpu/telemetry_sampler.hpp"

#include <chrono>

namespace ub::gpu {

TelemetrySample TelemetrySampler::timed(TelemetrySample s) const {
  s.t_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  return s;
}

void TelemetrySampler::start() {
  if (!nvml_ || running_) return;
  {
    std::lock_guard lock(mutex_);
    samples_.clear();
    started_ = std::chrono::steady_clock::now();
    energy_at_start_ = nvml_->energy_j();
    samples_.push_back(timed(nvml_->sample()));
  }
  running_ = true;
  thread_ = std::thread([this] {
    while (running_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(period_ms_));
      const TelemetrySample s = timed(nvml_->sample());
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
  samples_.push_back(timed(nvml_->sample()));
  const std::optional<double> energy_at_stop = nvml_->energy_j();
  TelemetrySummary t = TelemetrySummary::of(samples_, nvml_->power_limit_w());
  // The counter where the GPU has one (it sees every microsecond, the samples one in 20 ms), over
  // the same window as the samples.
  if (energy_at_start_ && energy_at_stop && *energy_at_stop >= *energy_at_start_) {
    t.energy_j = *energy_at_stop - *energy_at_start_;
    t.energy_source = kEnergyFromCounter;
  }
  return t;
}

}  // namespace ub::gpu
