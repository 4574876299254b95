// Ratios between two accelerators' published figures (new / old), and the dtypes one executes
// that the other cannot. Every ratio is nullopt when either figure is unknown: no guessing.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "facts/catalog.hpp"

namespace ub {

struct SpecRatios {
  std::map<Dtype, std::optional<double>> peak;  // per dtype, new / old
  std::optional<double> memory, bandwidth, power, mamf_bf16, mamf_fp8, interconnect;
};

struct SpecComparison {
  const Accelerator* old_gpu = nullptr;
  const Accelerator* new_gpu = nullptr;
  SpecRatios ratios;
  std::vector<Dtype> new_dtypes;      // the new one executes, the old one cannot
  std::vector<Dtype> lost_dtypes;     // the old one executes, the new one cannot
  std::vector<Dtype> unknown_dtypes;  // the catalog cannot tell for one of the two
};

// new / old, nullopt when either is unknown.
std::optional<double> ratio(const Figure& new_fig, const Figure& old_fig);

SpecComparison compare_specs(const Accelerator& old_gpu, const Accelerator& new_gpu);

}  // namespace ub
