// How `compare` presents two attention micro-benchmarks, two step decompositions or two MAMF runs
// (analysis/log_comparisons.hpp computes them): a table with the catalog's hardware ratios above it.
#pragma once

#include "analysis/log_comparisons.hpp"
#include "report/document.hpp"

namespace ub::report {

Document attention_comparison_document(const AttentionComparison& c);
Document decomposition_comparison_document(const DecompositionComparison& c);
Document mamf_comparison_document(const MamfComparison& c);
Document bandwidth_comparison_document(const BandwidthComparison& c);

}  // namespace ub::report
