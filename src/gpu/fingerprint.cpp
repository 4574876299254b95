// Stack fingerprint; see fingerprint.hpp. cuDNN and NCCL are opened with dlopen so the binary
// runs (and says "absent") where they are not installed, and so we can say which copy was loaded
// (the device machine has two cuDNNs).
#include "gpu/fingerprint.hpp"

#include <cublasLt.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>

#include "base/units.hpp"
#include "gpu/build_info.hpp"
#include "gpu/device.hpp"
#include "gpu/nvml.hpp"

namespace ub::gpu {

namespace {

std::string path_of(void* symbol) {
  Dl_info info{};
  return symbol && dladdr(symbol, &info) && info.dli_fname ? info.dli_fname : "";
}

template <class Fn>
LibraryVersion probe(const char* const* names, const char* symbol, Fn to_version) {
  LibraryVersion v;
  for (const char* const* n = names; *n; ++n) {
    void* lib = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
    if (!lib) continue;
    void* sym = dlsym(lib, symbol);
    if (sym) {
      v.version = to_version(sym);
      v.path = path_of(sym);
      return v;  // the library stays loaded: it is what this process uses
    }
    dlclose(lib);
  }
  v.why_absent = fmt::format("{} not found", names[0]);
  return v;
}

}  // namespace

LibraryVersion cudnn_version() {
  static const char* const names[] = {"libcudnn.so.9", "libcudnn.so", nullptr};
  return probe(names, "cudnnGetVersion", [](void* sym) {
    const size_t v = reinterpret_cast<size_t (*)()>(sym)();
    return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
  });
}

LibraryVersion nccl_version() {
  static const char* const names[] = {"libnccl.so.2", "libnccl.so", nullptr};
  return probe(names, "ncclGetVersion", [](void* sym) {
    int v = 0;
    reinterpret_cast<int (*)(int*)>(sym)(&v);
    return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
  });
}

LibraryVersion cublaslt_version() {
  LibraryVersion v;
  const size_t n = cublasLtGetVersion();
  v.version = fmt::format("{}.{}.{}", n / 10000, (n % 10000) / 100, n % 100);
  v.path = path_of(reinterpret_cast<void*>(&cublasLtGetVersion));
  return v;
}

Fingerprint gather_fingerprint(const std::vector<int>& wanted, Nvml* nvml) {
  const DeviceList list = list_devices();
  Fingerprint out;
  for (const DeviceInfo& d : list.devices) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), d.index) == wanted.end()) continue;
    GpuFacts g;
    g.index = d.index;
    g.name = d.name;
    g.uuid = d.uuid;
    g.pci_bus_id = d.pci_bus_id;
    g.compute_capability = fmt::format("{}.{}", d.cc_major, d.cc_minor);
    g.sm_count = d.sm_count;
    g.l2_mib = static_cast<double>(d.l2_bytes) / (1 << 20);
    g.memory_gib = to_gib(static_cast<size_t>(d.memory_bytes));
    if (nvml && nvml->select(d.uuid)) {
      g.max_sm_clock_mhz = nvml->max_sm_clock_mhz();
      g.power_limit_w = nvml->power_limit_w();
    }
    out.gpus.push_back(std::move(g));
  }
  auto library = [](const LibraryVersion& v) {
    StackEntry e;
    if (v.version.empty()) {
      e.absent = v.why_absent;
    } else {
      e.version = v.version;
      e.path = v.path;
    }
    return e;
  };
  out.stack["driver"].version = nvml ? std::optional<std::string>(nvml->driver_version()) : std::nullopt;
  out.stack["cuda_driver_api"].version = cuda_driver_version();
  out.stack["cuda_runtime"].version = cuda_runtime_version();
  out.stack["cublaslt"] = library(cublaslt_version());
  out.stack["cudnn"] = library(cudnn_version());
  out.stack["nccl"] = library(nccl_version());
  out.build = {{"type", UB_BUILD_TYPE},
               {"cxx_compiler", UB_CXX_COMPILER},
               {"cuda_compiler", UB_CUDA_COMPILER},
               {"cuda_architectures", UB_CUDA_ARCHS}};
  if (list.devices.empty()) out.no_gpu = list.why_none;
  return out;
}

}  // namespace ub::gpu
