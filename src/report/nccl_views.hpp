// How `compare` and `report` present collective benchmarks: the comparison table of two runs
// (analysis/nccl_comparison.hpp), and the report pages of one run or two, with busbw and the
// speedup charted against the size of the point.
#pragma once

#include "analysis/nccl_comparison.hpp"
#include "facts/catalog.hpp"
#include "records/readers/nccl_log.hpp"
#include "report/document.hpp"
#include "report/html_report.hpp"

namespace ub::report {

Document nccl_comparison_document(const NcclComparison& c);

ReportContent nccl_run_report(const NcclLog& log, const Catalog& catalog);
ReportContent nccl_comparison_report(const NcclComparison& c);

}  // namespace ub::report
