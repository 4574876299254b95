// Device enumeration through the CUDA runtime; see device.hpp.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include "gpu/device.hpp"

namespace ub::gpu {

namespace {
std::string version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

std::string uuid_string(const cudaUUID_t& u) {
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    s += fmt::format("{:02x}", static_cast<unsigned char>(u.bytes[i]));
    if (i == 3 || i == 5 || i == 7 || i == 9) s += '-';
  }
  return s;
}
}  // namespace

DeviceList list_devices() {
  DeviceList out;
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    out.why_none = fmt::format("no usable GPU: {} ({})", cudaGetErrorString(err),
                               cudaGetErrorName(err));
    cudaGetLastError();  // clear the sticky-free error state
    return out;
  }
  if (n == 0) {
    out.why_none = "no GPU visible to this process";
    return out;
  }
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    DeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.uuid = uuid_string(p.uuid);
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess) d.pci_bus_id = bus;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.sm_count = p.multiProcessorCount;
    d.l2_bytes = p.l2CacheSize;
    d.memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
    d.shared_memory_per_block_optin = static_cast<int64_t>(p.sharedMemPerBlockOptin);
    out.devices.push_back(std::move(d));
  }
  return out;
}

std::string cuda_runtime_version() {
  int v = 0;
  return cudaRuntimeGetVersion(&v) == cudaSuccess ? version_string(v) : "";
}

std::string cuda_driver_version() {
  int v = 0;
  return cudaDriverGetVersion(&v) == cudaSuccess && v > 0 ? version_string(v) : "";
}

}  // namespace ub::gpu
