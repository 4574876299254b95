// The stack fingerprint, gathered once per run and written into every context record: which
// GPUs, which driver and libraries (and from which file each was loaded), which build. `compare`
// reads it to refuse or flag comparisons across different software.
#pragma once

#include <string>
#include <vector>

#include "records/context_record.hpp"

namespace ub::gpu {

class Nvml;

// Version and file of a library opened at run time ("" when absent).
struct LibraryVersion {
  std::string version, path, why_absent;
};
LibraryVersion cudnn_version();
LibraryVersion nccl_version();
LibraryVersion cublaslt_version();

// The GPUs (the given device indices, all when empty), the stack and the build. `nvml` may be
// null.
Fingerprint gather_fingerprint(const std::vector<int>& devices, Nvml* nvml);

}  // namespace ub::gpu
