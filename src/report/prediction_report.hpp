// `report` of `predict --out` records: the PREDICTED curves of the new GPU against the measured
// (or carried) old one, by sequence length, each page and chart marked as not measured: the
// speedup with its interval and the break-even line, the step time of each GPU, and USD per
// million tokens of each where prices were given. With a measured run of the new GPU beside them
// (once it is rented), its step times and speedups are drawn on the same charts and the table
// gives predicted over measured per length: how far the prediction was off.
#pragma once

#include <optional>

#include "base/line_source.hpp"
#include "records/run_log.hpp"
#include "report/html_report.hpp"

namespace ub::report {

// WorkError when the file holds no prediction record, or predictions of two pairs of GPUs.
ReportContent prediction_report(const LineSource& t, const std::optional<RunLog>& measured_new = std::nullopt);

}  // namespace ub::report
