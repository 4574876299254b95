// Opening a GPU for a benchmark run; see device_run.hpp.
#include "measure/device_run.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>

#include "gpu/check.hpp"
#include "gpu/device.hpp"
#include "gpu/nvml.hpp"

namespace ub::measure {

void DeviceRun::emit(const nlohmann::json& record) const {
  if (writer) writer->write(record);
  if (echo) echo(record);
}

void DeviceRun::status(const std::string& line) const {
  if (progress) progress->update(line);
}

void DeviceRun::say(const std::string& line) const {
  if (progress) progress->line(line);
}

DeviceRun open_device_run(int device, RecordWriter* writer, Progress* progress, const std::atomic<bool>* interrupted) {
  const gpu::DeviceList list = gpu::list_devices();
  if (list.devices.empty()) throw WorkError(list.why_none);
  const auto it = std::find_if(list.devices.begin(), list.devices.end(),
                               [&](const gpu::DeviceInfo& d) { return d.index == device; });
  if (it == list.devices.end()) {
    throw UsageError(fmt::format("GPU {} does not exist (this machine has {})", device,
                                 list.devices.size()));
  }
  UB_CUDA_CHECK(cudaSetDevice(device));
  DeviceRun s;
  s.device = device;
  s.device_name = it->name;
  s.cc_major = it->cc_major;
  s.cc_minor = it->cc_minor;
  s.sm_count = it->sm_count;
  s.l2_bytes = static_cast<size_t>(it->l2_bytes);
  std::string why;
  if (auto n = gpu::Nvml::open(&why)) {
    if (n->select(it->uuid)) s.nvml = std::move(n);
  }
  s.writer = writer;
  s.progress = progress;
  s.interrupted = interrupted;
  return s;
}

}  // namespace ub::measure
