// CUDA-event profiling of a training step; see step_profiler.hpp.
#include "gpu/step_profiler.hpp"

#include "gpu/check.hpp"

namespace ub::gpu {

StepProfiler::~StepProfiler() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

cudaEvent_t StepProfiler::event() {
  cudaEvent_t e = nullptr;
  UB_CUDA_CHECK(cudaEventCreate(&e));
  events_.push_back(e);
  return e;
}

void StepProfiler::begin(const std::string& cls, const std::string& label, double flop, double bytes, cudaStream_t s) {
  Pending p;
  p.op.cls = cls, p.op.label = label, p.op.flop = flop, p.op.bytes = bytes;
  p.start = event();
  p.stop = event();
  UB_CUDA_CHECK(cudaEventRecord(p.start, s));
  ops_.push_back(std::move(p));
}

void StepProfiler::end(cudaStream_t s) { UB_CUDA_CHECK(cudaEventRecord(ops_.back().stop, s)); }

std::vector<StepProfiler::Op> StepProfiler::collect() {
  std::vector<Op> out;
  for (Pending& p : ops_) {
    UB_CUDA_CHECK(cudaEventSynchronize(p.stop));
    UB_CUDA_CHECK(cudaEventElapsedTime(&p.op.ms, p.start, p.stop));
    out.push_back(p.op);
  }
  return out;
}

}  // namespace ub::gpu
