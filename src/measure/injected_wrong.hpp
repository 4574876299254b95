// A wrong result on purpose, to prove that a failed check fails the command: with
// UB_INJECT_WRONG_RESULT naming a benchmark (mamf, attention, bandwidth, nccl; several comma-
// separated, or `all`), its points overwrite their output with 0xFF bytes (NaN in every float
// type, a wrong word in every integer one) after the work ran and before the check reads it, so
// the real check sees a wrong result. The GPU tests set it; nothing else does.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "gpu/cuda_raii.hpp"

namespace ub::measure {

// Whether UB_INJECT_WRONG_RESULT names `benchmark`.
bool wrong_result_injected(const char* benchmark);

// Spoils `bytes` of `out` on `stream` when `benchmark`'s results are to be wrong.
void spoil_if_injected(const char* benchmark, void* out, size_t bytes, cudaStream_t stream);
inline void spoil_if_injected(const char* benchmark, const gpu::DeviceBuffer& out, cudaStream_t stream) {
  spoil_if_injected(benchmark, out.get(), out.bytes(), stream);
}

}  // namespace ub::measure
