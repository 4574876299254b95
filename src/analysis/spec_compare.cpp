// Spec ratios; see spec_compare.hpp.
#include "analysis/spec_compare.hpp"

namespace ub {

std::optional<double> ratio(const Figure& new_fig, const Figure& old_fig) {
  if (!new_fig.known() || !old_fig.known()) return std::nullopt;
  return new_fig.value / old_fig.value;
}

namespace {
std::optional<double> mamf_ratio(const std::optional<PublishedMamf>& n,
                                 const std::optional<PublishedMamf>& o) {
  if (!n || !o) return std::nullopt;
  return ratio(n->tflops, o->tflops);
}
}  // namespace

SpecComparison compare_specs(const Accelerator& old_gpu, const Accelerator& new_gpu) {
  SpecComparison c;
  c.old_gpu = &old_gpu;
  c.new_gpu = &new_gpu;
  for (Dtype d : kAllDtypes) {
    c.ratios.peak[d] = ratio(new_gpu.peak(d), old_gpu.peak(d));
    const auto o = old_gpu.peak(d).executes(), n = new_gpu.peak(d).executes();
    if (!o || !n) {
      c.unknown_dtypes.push_back(d);
      continue;
    }
    if (*n && !*o) c.new_dtypes.push_back(d);
    if (*o && !*n) c.lost_dtypes.push_back(d);
  }
  c.ratios.memory = ratio(new_gpu.memory_gb, old_gpu.memory_gb);
  c.ratios.bandwidth = ratio(new_gpu.bandwidth_tbps, old_gpu.bandwidth_tbps);
  c.ratios.power = ratio(new_gpu.power_w, old_gpu.power_w);
  c.ratios.interconnect = ratio(new_gpu.interconnect_gbps, old_gpu.interconnect_gbps);
  c.ratios.mamf_bf16 = mamf_ratio(new_gpu.mamf_bf16, old_gpu.mamf_bf16);
  c.ratios.mamf_fp8 = mamf_ratio(new_gpu.mamf_fp8, old_gpu.mamf_fp8);
  return c;
}

}  // namespace ub
