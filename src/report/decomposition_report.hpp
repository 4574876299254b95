// `report` of step decompositions (`decompose` records, bench_decompose.py's printout): where each
// run's step goes, as a table and one stacked bar per run (its buckets, in ms, adding up to the
// step); for two runs also compare's bucket-by-bucket speedups.
#pragma once

#include <optional>
#include <vector>

#include "analysis/log_comparisons.hpp"
#include "records/readers/decomposition_log.hpp"
#include "report/html_report.hpp"

namespace ub::report {

ReportContent decomposition_report(const std::vector<DecompositionLog>& runs,
                                   const std::optional<DecompositionComparison>& comparison);

}  // namespace ub::report
