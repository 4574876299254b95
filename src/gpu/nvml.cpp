// NVML through dlopen; see nvml.hpp. The function signatures below are NVML's documented C API.
#include "gpu/nvml.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

namespace ub::gpu {

namespace {
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr unsigned kClockSm = 1, kClockMem = 2;
constexpr unsigned kTemperatureGpu = 0;
constexpr unsigned kMaxNvLinks = 18;  // NVML_NVLINK_MAX_LINKS
constexpr int kP2pNvlink = 2, kP2pOk = 0;  // NVML_P2P_CAPS_INDEX_NVLINK, NVML_P2P_STATUS_OK
// nvmlPciInfo_t as NVML lays it out.
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, device_id, subsystem_id;
  char bus_id[32];
};
bool same_pci(const PciInfo& a, const PciInfo& b) { return a.domain == b.domain && a.bus == b.bus && a.device == b.device; }
}  // namespace

struct Nvml::Api {
  std::unique_ptr<void, int (*)(void*)> lib{nullptr, &dlclose};  // closed with the Api
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*by_uuid)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  // Topology (optional: absent in old drivers, then links are "unknown").
  nvmlReturn_t (*pci_info)(nvmlDevice_t, PciInfo*) = nullptr;
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*nvlink_remote_pci)(nvmlDevice_t, unsigned, PciInfo*) = nullptr;
  nvmlReturn_t (*common_ancestor)(nvmlDevice_t, nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*p2p_status)(nvmlDevice_t, nvmlDevice_t, int, int*) = nullptr;
  nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;  // millijoules
};

std::unique_ptr<Nvml> Nvml::open(std::string* why, const char* library) {
  auto api = std::make_unique<Api>();
  api->lib.reset(dlopen(library, RTLD_NOW | RTLD_LOCAL));
  void* lib = api->lib.get();
  if (!lib) {
    if (why) *why = fmt::format("NVML not available ({})", dlerror());
    return nullptr;
  }
  bool ok = true;
  auto load = [&](auto& fn, const char* name, const char* fallback = nullptr) {
    void* sym = dlsym(lib, name);
    if (!sym && fallback) sym = dlsym(lib, fallback);
    if (!sym) {
      ok = false;
      if (why) *why = fmt::format("NVML has no {}", name);
    }
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
  };
  load(api->init, "nvmlInit_v2");
  load(api->shutdown, "nvmlShutdown");
  load(api->driver_version, "nvmlSystemGetDriverVersion");
  load(api->by_uuid, "nvmlDeviceGetHandleByUUID");
  load(api->clock, "nvmlDeviceGetClockInfo");
  load(api->max_clock, "nvmlDeviceGetMaxClockInfo");
  load(api->power, "nvmlDeviceGetPowerUsage");
  load(api->power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  load(api->temperature, "nvmlDeviceGetTemperature");
  load(api->reasons, "nvmlDeviceGetCurrentClocksEventReasons",
       "nvmlDeviceGetCurrentClocksThrottleReasons");
  if (!ok) return nullptr;
  auto optional = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
  };
  optional(api->pci_info, "nvmlDeviceGetPciInfo_v3");
  optional(api->nvlink_state, "nvmlDeviceGetNvLinkState");
  optional(api->nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  optional(api->common_ancestor, "nvmlDeviceGetTopologyCommonAncestor");
  optional(api->p2p_status, "nvmlDeviceGetP2PStatus");
  optional(api->energy, "nvmlDeviceGetTotalEnergyConsumption");
  if (const int rc = api->init(); rc != kSuccess) {
    if (why) *why = fmt::format("nvmlInit failed with code {}", rc);
    return nullptr;
  }
  std::unique_ptr<Nvml> n(new Nvml());
  n->api_ = std::move(api);
  return n;
}

Nvml::~Nvml() {
  if (api_) api_->shutdown();  // then the library is closed with api_
}

std::string Nvml::driver_version() const {
  char buf[96] = {};
  return api_->driver_version(buf, sizeof buf) == kSuccess ? std::string(buf) : std::string();
}

bool Nvml::select(const std::string& uuid) {
  nvmlDevice_t d = nullptr;
  if (api_->by_uuid(uuid.c_str(), &d) != kSuccess) return false;
  device_ = d;
  return true;
}

TelemetrySample Nvml::sample() const {
  TelemetrySample s;
  if (!device_) return s;
  unsigned v = 0;
  if (api_->clock(device_, kClockSm, &v) == kSuccess) s.sm_clock_mhz = v;
  if (api_->clock(device_, kClockMem, &v) == kSuccess) s.mem_clock_mhz = v;
  if (api_->power(device_, &v) == kSuccess) s.power_w = v / 1000.0;
  if (api_->temperature(device_, kTemperatureGpu, &v) == kSuccess) s.temperature_c = v;
  unsigned long long r = 0;
  if (api_->reasons(device_, &r) == kSuccess) s.reasons = r;
  return s;
}

std::optional<double> Nvml::energy_j() const {
  unsigned long long mj = 0;
  if (!device_ || !api_->energy || api_->energy(device_, &mj) != kSuccess) return std::nullopt;
  return static_cast<double>(mj) / 1000.0;
}

double Nvml::power_limit_w() const {
  unsigned v = 0;
  return device_ && api_->power_limit(device_, &v) == kSuccess ? v / 1000.0 : 0.0;
}

std::string Nvml::link_between(const std::string& uuid_a, const std::string& uuid_b) const {
  nvmlDevice_t a = nullptr, b = nullptr;
  if (api_->by_uuid(uuid_a.c_str(), &a) != kSuccess || api_->by_uuid(uuid_b.c_str(), &b) != kSuccess) return "unknown";
  if (a == b) return "self";
  // NVLink: the active links whose far end is the other GPU; where the remote's PCI address is not
  // the one the GPU reports (virtual machines), NVML's NVLink peer-to-peer status and the count of
  // active links say it.
  PciInfo other{};
  int links = 0, active_links = 0;
  if (api_->nvlink_state && api_->nvlink_remote_pci && api_->pci_info && api_->pci_info(b, &other) == kSuccess) {
    for (unsigned l = 0; l < kMaxNvLinks; ++l) {
      int active = 0;
      PciInfo remote{};
      if (api_->nvlink_state(a, l, &active) != kSuccess || !active) continue;
      ++active_links;
      if (api_->nvlink_remote_pci(a, l, &remote) == kSuccess && same_pci(remote, other)) ++links;
    }
  }
  if (links > 0) return fmt::format("NVLink x{}", links);
  int p2p = -1;
  if (active_links > 0 && api_->p2p_status && api_->p2p_status(a, b, kP2pNvlink, &p2p) == kSuccess && p2p == kP2pOk) {
    return fmt::format("NVLink ({} links active)", active_links);
  }
  int level = -1;
  if (!api_->common_ancestor || api_->common_ancestor(a, b, &level) != kSuccess) return "unknown";
  switch (level) {
    case 0: return "same board";
    case 10: return "PCIe switch";
    case 20: return "PCIe switches";
    case 30: return "PCIe host bridge";
    case 40: return "NUMA node";
    case 50: return "across NUMA nodes";
  }
  return "unknown";
}

double Nvml::max_sm_clock_mhz() const {
  unsigned v = 0;
  return device_ && api_->max_clock(device_, kClockSm, &v) == kSuccess ? v : 0.0;
}

}  // namespace ub::gpu
