// NVML, opened at run time (dlopen of libnvidia-ml.so.1) with the few functions we need declared
// by us: clocks, power, temperature, the clocks-event-reasons bitmask, the driver version, how
// GPUs are linked. No nvml.h is needed to build, and a machine without the driver still runs
// everything else.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "records/telemetry.hpp"

namespace ub::gpu {

class Nvml {
 public:
  // nullptr with `why` filled when the library or a needed symbol is missing, or init fails.
  [[nodiscard]] static std::unique_ptr<Nvml> open(std::string* why, const char* library = "libnvidia-ml.so.1");
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  std::string driver_version() const;
  // The device with this CUDA UUID ("GPU-..."); false when NVML does not know it.
  [[nodiscard]] bool select(const std::string& uuid);
  TelemetrySample sample() const;
  double power_limit_w() const;
  // The driver's energy counter, in joules since it loaded; nullopt where the GPU has none.
  std::optional<double> energy_j() const;
  double max_sm_clock_mhz() const;
  // How two GPUs of this host are linked: "NVLink xN" (active links between them), else the
  // closest PCIe / CPU ancestor ("PCIe switch", "PCIe host bridge", "NUMA node", "across NUMA
  // nodes"), "self", or "unknown".
  std::string link_between(const std::string& uuid_a, const std::string& uuid_b) const;

 private:
  struct Api;
  Nvml() = default;
  std::unique_ptr<Api> api_;
  void* device_ = nullptr;
};

}  // namespace ub::gpu
