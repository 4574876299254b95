// `predict`'s output as a document: one summary table (per sequence length: the measured step,
// the PREDICTED step, speedup and rate with their intervals, what limits it, cost and fit), then
// each prediction's buckets with the ratio each was scaled by and where that ratio comes from.
#pragma once

#include <vector>

#include "analysis/predict/prediction.hpp"
#include "report/document.hpp"

namespace ub::report {

Document prediction_document(const std::vector<Prediction>& predictions);

}  // namespace ub::report
