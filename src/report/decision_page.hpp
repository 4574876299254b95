// The page `decide` writes from two GPUs' measurements (analysis/upgrade_decision.hpp), for the
// person who signs the purchase order: the verdict in one line first (after the software
// mismatch, when one was forced), then its reasons in the guide's order, then the guide's
// tables side by side (the training step per length with $/token, the longest sequence each GPU
// holds, the micro-benchmarks against the catalog's ratios, attention per length, the step's
// buckets, collectives) and the stacks. Every row says what its numbers are: MEASURED or
// EXAMPLE DATA (PREDICTED on the page of a prediction), and so does every chart's series.
#pragma once

#include "analysis/upgrade_decision.hpp"
#include "report/html_report.hpp"

namespace ub::report {

ReportContent decision_page(const UpgradeDecision& d);

nlohmann::json decision_json(const UpgradeDecision& d);

}  // namespace ub::report
