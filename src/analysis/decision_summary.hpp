// The answer of a two-run comparison in plain words, for the top of the report: over which
// sequence lengths the new GPU is cheaper per token (the whole speedup interval above the
// break-even price ratio), where it costs more and by how much, where the break-even is crossed
// (interpolated between the two measured lengths around it, and said to be), where only one GPU
// fits, the wall-clock gain, and whether the two runs' software differs (every verdict then carries
// that difference).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/compare.hpp"

namespace ub {

struct DecisionSummary {
  std::vector<std::string> lines;
  std::optional<double> crossover_seqlen;  // interpolated, where the speedup meets the break-even
  std::string stack_alert;                 // "" when the runs share their software, else what differs
};

DecisionSummary decision_summary(const Comparison& c);

}  // namespace ub
