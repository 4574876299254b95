// The ml-engineering guide's two-part decision, from specs (part 2 proper needs measurements of
// both GPUs: `compare`; from a measurement of the old GPU alone, part 2 is PREDICTED).
//
// Part 1, capability: does the new GPU execute a dtype the old one cannot, that you need? If so
// the old GPU scores zero, not "2x slower", and that decides (subject to software support).
// Part 2, performance: what the spec ratios bound (compute-bound work by the peak / MAMF ratio,
// bandwidth-bound work by the HBM ratio), the memory each needs for the model's training state,
// and the break-even speedup (= price ratio) that a measurement must beat to lower $/token.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/predict/prediction.hpp"
#include "analysis/spec_compare.hpp"
#include "facts/catalog.hpp"
#include "facts/model_shape.hpp"

namespace ub {

struct DecideInput {
  const Accelerator* from = nullptr;
  const Accelerator* to = nullptr;
  std::optional<ModelShape> model;
  std::vector<Dtype> need;  // dtypes the user's recipe needs
  std::optional<double> price_from, price_to;  // USD per GPU-hour
  // Part 2 PREDICTED (analysis/predict/) from a measurement of the old GPU only, when given.
  std::vector<Prediction> predicted;
};

struct Decision {
  std::string verdict;  // see decide.cpp for the list
  bool capability_gap = false;
  std::vector<Dtype> missing_dtypes;  // needed, executed by the new GPU, not by the old
  std::vector<Dtype> lost_dtypes;     // needed, executed by the old GPU, not by the new
  std::vector<std::string> reasons;
  std::optional<double> break_even_speedup;
  SpecComparison specs;
};

// Bytes of training state per parameter in bf16 mixed precision with AdamW: bf16 weights (2) and
// gradients (2), fp32 master weights (4), two fp32 moments (8). Activations are not included.
inline constexpr double kTrainingStateBytesPerParam = 16.0;

Decision decide(const DecideInput& in);

}  // namespace ub
