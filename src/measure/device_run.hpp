// What every benchmark run on one GPU shares: the device it runs on, NVML for telemetry, the
// record writer, progress output and the interrupt flag. One per GPU worker; no globals.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "base/progress.hpp"
#include "records/point_counts.hpp"
#include "records/record_file.hpp"

namespace ub::gpu {
class Nvml;
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
  std::function<void(const nlohmann::json&)> echo;  // also shown each record (train prints them)
  // A rank of a job: the job's decision from this rank's (stop when any rank stops), so that all
  // ranks run the same collectives. Empty on one GPU.
  std::function<bool(bool)> agree;
  PointCounts counts;  // what this device's points came to (the driver counts them)

  bool stop_requested() const { return interrupted && interrupted->load(); }
  // Whether to stop before the next point: this rank's decision, agreed with the job's.
  bool stop_agreed() const { return agree ? agree(stop_requested()) : stop_requested(); }
  // Appends a record to the run's file (nothing without a writer), and echoes it.
  void emit(const nlohmann::json& record) const;
  void status(const std::string& line) const;  // a transient progress line
  void say(const std::string& line) const;     // a progress line that stays
};

// Sets the device current on this thread and fills the run's device facts and NVML.
// Throws UsageError when the device does not exist.
DeviceRun open_device_run(int device, RecordWriter* writer, Progress* progress, const std::atomic<bool>* interrupted);

}  // namespace ub::measure
