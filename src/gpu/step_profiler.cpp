// CUPTI profiling of a training step's operations; see step_profiler.hpp.
#include "gpu/step_profiler.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "gpu/check.hpp"

namespace ub::gpu {

void StepProfiler::begin(const std::string& cls, const std::string& label, double flop, double bytes, cudaStream_t) {
  Op op;
  op.cls = cls, op.label = label, op.flop = flop, op.bytes = bytes;
  op.step = static_cast<int>(steps_.size()) - 1;
  ops_.push_back(std::move(op));
  ActivityTrace::push(ops_.size());
}

void StepProfiler::end(cudaStream_t) { ActivityTrace::pop(); }

void StepProfiler::step_begin(cudaStream_t s) {
  UB_CUDA_CHECK(cudaStreamSynchronize(s));
  steps_.push_back({ActivityTrace::now(), 0});
}

void StepProfiler::step_end(cudaStream_t s) {
  UB_CUDA_CHECK(cudaStreamSynchronize(s));
  if (steps_.empty() || steps_.back().end) throw WorkError("StepProfiler: step_end without step_begin");
  steps_.back().end = ActivityTrace::now();
}

StepProfiler::Profile StepProfiler::collect() {
  Profile p;
  p.log = trace_.collect();
  if (p.log.dropped) {
    throw WorkError(fmt::format("CUPTI dropped {} activity records: the profile would be incomplete", p.log.dropped));
  }
  for (const GpuActivityRecord& r : p.log.records) {
    if (r.kind != GpuActivityRecord::Kind::kernel || r.operation == 0 || r.operation > ops_.size()) continue;
    Op& op = ops_[r.operation - 1];
    op.ms += static_cast<double>(r.end - r.start) / 1e6;
    op.kernels += 1;
  }
  p.ops = std::move(ops_);
  p.steps = std::move(steps_);
  ops_.clear();
  steps_.clear();
  return p;
}

}  // namespace ub::gpu
