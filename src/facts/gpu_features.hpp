// What each NVIDIA architecture executes, for the commands that measure on it: one table, written
// once, that env prints and mamf, bandwidth and attention consult before they launch anything. A
// GPU without a feature gets the fallback that runs there, or a refusal that says which
// architecture has it; never a launch that fails, and never a guess. By compute capability:
//
//   feature                         needs    where it is missing
//   the engine's kernels, bf16/tf32 8.0      (nothing older is supported)
//   fp8 (e4m3) GEMMs                8.9      refused: Ampere has no fp8 matrix units
//   block-scaled mxfp8 / nvfp4 GEMM 10.0     refused: microscaling is Blackwell's (sm_100, sm_103, sm_120)
//   the bulk-copy bandwidth kernel  9.0      refused where asked for: the default vectorised copy runs (TMA is Hopper's)
//   cuDNN fused attention, bf16     8.0      (cuDNN picks its engine per architecture)
//   cuDNN fused attention, fp8      9.0      refused: cuDNN's fp8 SDPA runs on Hopper and later
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "facts/dtype.hpp"

namespace ub {

struct ComputeCapability {
  int major = 0, minor = 0;
  int value() const { return major * 10 + minor; }
  std::string text() const;  // "9.0"
};

// "9.0" -> {9, 0}; nullopt for anything else.
std::optional<ComputeCapability> parse_compute_capability(std::string_view text);

enum class GpuFeature { engine, fp8_gemm, block_scaled_gemm, bulk_copy, fused_attention_bf16, fused_attention_fp8 };

struct FeatureRow {
  GpuFeature feature;
  std::string name;      // "fp8 GEMMs"
  int needs = 0;         // compute capability x 10
  std::string fallback;  // what runs there instead ("" where nothing does)
};
const std::vector<FeatureRow>& gpu_features();

// Why `cc` lacks `f` (naming what has it and the fallback where there is one); nullopt when it has it.
std::optional<std::string> missing_feature(GpuFeature f, ComputeCapability cc);

// Why `mamf` cannot time a GEMM in `d` on `cc`; nullopt when it can.
std::optional<std::string> gemm_unsupported_reason(Dtype d, ComputeCapability cc);

}  // namespace ub
