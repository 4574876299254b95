// The GPUs this process can see, as plain data (no CUDA header: the CLI and the core library
// include this). Returns an empty list with a reason, never throws, when there is no driver or
// no GPU, so commands can say so plainly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ub::gpu {

struct DeviceInfo {
  int index = 0;
  std::string name;  // as the driver reports it: "NVIDIA H200"
  std::string uuid;  // "GPU-xxxxxxxx-..."
  std::string pci_bus_id;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  int64_t shared_memory_per_block_optin = 0;
};

struct DeviceList {
  std::vector<DeviceInfo> devices;
  std::string why_none;  // set when devices is empty
};

DeviceList list_devices();

// Runtime and driver versions as "13.0"; "" when unavailable.
std::string cuda_runtime_version();
std::string cuda_driver_version();

}  // namespace ub::gpu
