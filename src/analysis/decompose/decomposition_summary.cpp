// The record of a decomposition; see decomposition_summary.hpp.
#include "analysis/decompose/decomposition_summary.hpp"
#include "base/units.hpp"

#include <algorithm>

namespace ub::trace {

namespace {

// The bucket's achieved rate and what it is against.
void add_rate(DecompositionBucketRecord& x, Bucket b, const BucketWork& work, const Accelerator* gpu) {
  const size_t i = static_cast<size_t>(b);
  if (x.ms <= 0) return;
  if (work.flop[i] > 0) {
    x.tflop = to_tflop(work.flop[i]);
    x.tflops = tflops_from(work.flop[i], x.ms);
    if (gpu && b == Bucket::gemm && gpu->mamf_bf16 && gpu->mamf_bf16->tflops.known()) {
      x.of_ceiling = fraction_of(x.tflops, gpu->mamf_bf16->tflops.get());
      x.ceiling = "published bf16 MAMF";
    } else if (gpu && gpu->peak(Dtype::bf16).known()) {
      x.of_ceiling = gpu->fraction_of_peak(x.tflops, Dtype::bf16);
      x.ceiling = "dense bf16 peak";
    }
  } else if (work.bytes[i] > 0) {
    x.gbytes = work.bytes[i] / 1e9;
    x.gbps = gbps_from(work.bytes[i], x.ms);
    if (gpu && gpu->bandwidth_tbps.known()) {
      x.of_ceiling = fraction_of(x.gbps, gpu->bandwidth_tbps.value * 1e3);
      x.ceiling = "HBM bandwidth";
    }
  }
}

}  // namespace

BucketWork model_work(const StepFlops& flops) {
  BucketWork w;
  w.flop[static_cast<size_t>(Bucket::gemm)] = flops.dense;
  w.flop[static_cast<size_t>(Bucket::attention)] = flops.attention;
  return w;
}

DecompositionRecord summarize(const TraceDecomposition& d, const std::optional<BucketWork>& work, const Accelerator* gpu,
                              size_t unclassified_listed) {
  DecompositionRecord r;
  r.source = d.source;
  r.file = d.path;
  r.gpu = d.gpu;
  r.device = d.device;
  r.rank = d.rank, r.world_size = d.world_size;
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
    if (work && is_compute(b)) add_rate(x, b, *work, gpu);
    r.buckets.push_back(std::move(x));
  }
  for (size_t i = 0; i < d.unclassified.size() && i < unclassified_listed; ++i) {
    r.unclassified.push_back({d.unclassified[i].name, d.unclassified[i].us / 1e3, d.unclassified[i].count});
  }
  return r;
}

}  // namespace ub::trace
