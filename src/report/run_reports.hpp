// The contents of `report`: for two runs, the comparison, its four charts (TFLOPS per GPU,
// speedup with the hardware-ratio lines, attention share, peak memory with each GPU's capacity),
// both stacks and the decision; for one run, throughput, MFU, attention share and memory against
// sequence length, the memory fit and the longest sequence each catalog GPU can hold.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/compare.hpp"
#include "facts/catalog.hpp"
#include "report/html_report.hpp"

namespace ub::report {

// `reasons`: the spec-level decision's reasons (analysis/decide), shown under "Decision".
ReportContent comparison_report(const Comparison& c, const std::vector<std::string>& reasons);

ReportContent single_run_report(const RunLog& run, const Catalog& catalog,
                                const std::optional<ModelShape>& model);

}  // namespace ub::report
