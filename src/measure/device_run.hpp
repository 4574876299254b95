// What every GPU benchmark run shares: the device it runs on, NVML for telemetry, the record
// writer, progress output and the interrupt flag. One per GPU worker; no globals.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "core/records.hpp"
#include "core/progress.hpp"

namespace ub::gpu {
class Nvml;
struct DeviceInfo;
}  // namespace ub::gpu

namespace ub::measure {

struct DeviceRun {
  int device = 0;
  std::string device_name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  size_t l2_bytes = 0;
  std::shared_ptr<gpu::Nvml> nvml;  // null without NVML
  RecordWriter* writer = nullptr;
  Progress* progress = nullptr;
  const std::atomic<bool>* interrupted = nullptr;

  bool stop_requested() const { return interrupted && interrupted->load(); }
};

// Sets the device current on this thread and fills the run's device facts and NVML.
// Throws WorkError when the device does not exist.
DeviceRun open_device_run(int device, RecordWriter* writer, Progress* progress,
                     const std::atomic<bool>* interrupted);

}  // namespace ub::measure
