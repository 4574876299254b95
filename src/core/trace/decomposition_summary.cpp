// The record of a decomposition; see decomposition_summary.hpp.
#include "core/trace/decomposition_summary.hpp"

#include <algorithm>

namespace ub::trace {

DecompositionRecord summarize(const TraceDecomposition& d, const std::optional<StepFlops>& flops, const Accelerator* gpu,
                              size_t unclassified_listed) {
  DecompositionRecord r;
  r.source = "torch.profiler trace";
  r.file = d.path;
  r.gpu = d.gpu;
  r.device = d.device;
  r.steps_from = d.steps_from;
  r.steps = d.steps.size();
  const StepDecomposition& m = d.median_step();
  r.step = m.name;
  r.step_ms = m.step_us / 1e3;
  r.communication_ms = m.communication_us / 1e3;
  r.communication_overlapped_ms = m.communication_overlapped_us / 1e3;
  for (Bucket b : kAllBuckets) {
    DecompositionBucketRecord x;
    x.name = std::string(to_string(b));
    x.ms = m.of(b) / 1e3;
    x.share = m.step_us > 0 ? m.of(b) / m.step_us : 0;
    x.min_ms = x.max_ms = x.ms;
    x.kernel_ms = m.kernel_us[static_cast<size_t>(b)] / 1e3;
    for (const StepDecomposition& s : d.steps) {
      x.min_ms = std::min(x.min_ms, s.of(b) / 1e3);
      x.max_ms = std::max(x.max_ms, s.of(b) / 1e3);
    }
    if (flops && x.ms > 0 && (b == Bucket::gemm || b == Bucket::attention)) {
      x.tflop = (b == Bucket::gemm ? flops->dense : flops->attention) / 1e12;
      x.tflops = *x.tflop / (x.ms / 1e3);
      if (gpu && b == Bucket::gemm && gpu->mamf_bf16 && gpu->mamf_bf16->tflops.known()) {
        x.of_ceiling = *x.tflops / gpu->mamf_bf16->tflops.value;
        x.ceiling = "published bf16 MAMF";
      } else if (gpu && gpu->peak(Dtype::bf16).known()) {
        x.of_ceiling = *x.tflops / gpu->peak(Dtype::bf16).value;
        x.ceiling = "dense bf16 peak";
      }
    }
    r.buckets.push_back(std::move(x));
  }
  for (size_t i = 0; i < d.unclassified.size() && i < unclassified_listed; ++i) {
    r.unclassified.push_back({d.unclassified[i].name, d.unclassified[i].us / 1e3, d.unclassified[i].count});
  }
  return r;
}

}  // namespace ub::trace
