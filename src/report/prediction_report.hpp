// `report` of `predict --out` records: the PREDICTED curves of the new GPU against the measured
// (or carried) old one, by sequence length, each page and chart marked as not measured: the
// speedup with its interval and the break-even line, the step time of each GPU, and USD per
// million tokens of each where prices were given.
#pragma once

#include "core/readers/text_lines.hpp"
#include "report/html_report.hpp"

namespace ub::report {

// WorkError when the file holds no prediction record.
ReportContent prediction_report(const TextLines& t);

}  // namespace ub::report
