// Our engine's profiled steps written as a torch.profiler (Kineto) Chrome trace: every kernel,
// copy and fill CUPTI recorded, on its stream, named as the GPU ran it, with the operation that
// launched it; each step a ProfilerStep#N annotation; each operation a GPU annotation spanning its
// kernels. Perfetto and chrome://tracing show it, and `decompose TRACE` reads it back as it reads
// anyone's trace. Written event by event, never held whole.
#pragma once

#include <string>

#include "gpu/step_profiler.hpp"

namespace ub::measure {

// WorkError when the file cannot be written.
void write_chrome_trace(const gpu::StepProfiler::Profile& profile, const std::string& gpu_name, int device,
                        const std::string& path);

}  // namespace ub::measure
