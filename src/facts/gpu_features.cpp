// The architecture table; see gpu_features.hpp.
#include "facts/gpu_features.hpp"

#include <fmt/format.h>

#include <charconv>

namespace ub {

std::string ComputeCapability::text() const { return fmt::format("{}.{}", major, minor); }

std::optional<ComputeCapability> parse_compute_capability(std::string_view text) {
  const size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  ComputeCapability cc;
  const auto a = std::from_chars(text.data(), text.data() + dot, cc.major);
  const auto b = std::from_chars(text.data() + dot + 1, text.data() + text.size(), cc.minor);
  if (a.ec != std::errc{} || a.ptr != text.data() + dot || b.ec != std::errc{} || b.ptr != text.data() + text.size() ||
      cc.major <= 0 || cc.minor < 0 || cc.minor > 9) {
    return std::nullopt;
  }
  return cc;
}

const std::vector<FeatureRow>& gpu_features() {
  static const std::vector<FeatureRow> rows = {
      {GpuFeature::engine, "the engine's kernels (bf16, tf32)", 80, ""},
      {GpuFeature::fp8_gemm, "fp8 GEMMs", 89, ""},
      {GpuFeature::block_scaled_gemm, "block-scaled mxfp8 / nvfp4 GEMMs", 100, ""},
      {GpuFeature::bulk_copy, "the bulk-copy (TMA) bandwidth kernel", 90, "bandwidth's default tiled8cs kernel"},
      {GpuFeature::fused_attention_bf16, "cuDNN fused attention in bf16", 80, ""},
      {GpuFeature::fused_attention_fp8, "cuDNN fused attention in fp8", 90, ""},
  };
  return rows;
}

std::optional<std::string> missing_feature(GpuFeature f, ComputeCapability cc) {
  for (const FeatureRow& r : gpu_features()) {
    if (r.feature != f) continue;
    if (cc.value() >= r.needs) return std::nullopt;
    return fmt::format("{}: compute capability {}.{} or later; this GPU is {}{}", r.name, r.needs / 10, r.needs % 10,
                       cc.text(), r.fallback.empty() ? "" : fmt::format(" ({} run instead)", r.fallback));
  }
  return "unknown feature";
}

std::optional<std::string> gemm_unsupported_reason(Dtype d, ComputeCapability cc) {
  switch (d) {
    case Dtype::fp32:
    case Dtype::fp16:
    case Dtype::tf32:
    case Dtype::bf16: return missing_feature(GpuFeature::engine, cc);
    case Dtype::fp8:
      if (const auto why = missing_feature(GpuFeature::fp8_gemm, cc)) {
        return fmt::format("{} (fp8 matrix units are Ada's, Hopper's and Blackwell's)", *why);
      }
      return std::nullopt;
    case Dtype::mxfp8:
    case Dtype::nvfp4:
      if (missing_feature(GpuFeature::block_scaled_gemm, cc)) {
        return fmt::format("{} is a block-scaled (microscaling) format that only Blackwell "
                           "(compute capability 10.0+) executes; this GPU is {} and has no "
                           "hardware for it: it scores zero here, not slower", to_string(d), cc.text());
      }
      return std::nullopt;
    case Dtype::int8:
    case Dtype::fp6:
    case Dtype::fp4:
    case Dtype::mxfp4:
      return fmt::format("mamf does not measure {} yet (supported: bf16, fp16, tf32, fp32, fp8, "
                         "mxfp8, nvfp4)", to_string(d));
  }
  return "unknown dtype";
}

}  // namespace ub
