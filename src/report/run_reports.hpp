// The contents of `report`: for two runs, the comparison, its four charts (TFLOPS per GPU,
// speedup with the hardware-ratio lines, attention share, peak memory with each GPU's capacity),
// both stacks and the decision; for one run, throughput, MFU, attention share and memory against
// sequence length, the memory fit and the longest sequence each catalog GPU can hold.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/compare.hpp"
#include "analysis/decision_summary.hpp"
#include "facts/catalog.hpp"
#include "report/html_report.hpp"

namespace ub::report {

// The charts of two runs, on one x range: TFLOPS, the speedup with its interval band, the hardware
// ratios, the break-even and the crossover; $/Mtoken per GPU when priced; the attention share;
// memory against tokens with each run's fit and the longest sequence each GPU holds.
std::vector<Chart> comparison_charts(const Comparison& c, const DecisionSummary& summary);

// `reasons`: the spec-level decision's reasons (analysis/decide), shown under "Decision".
ReportContent comparison_report(const Comparison& c, const std::vector<std::string>& reasons);

ReportContent single_run_report(const RunLog& run, const Catalog& catalog,
                                const std::optional<ModelShape>& model);

}  // namespace ub::report
