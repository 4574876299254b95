// Aggregating a profiled step; see train_breakdown.hpp.
#include "measure/train_breakdown.hpp"

#include <algorithm>

namespace ub::measure {

namespace {

BreakdownRow& row_for(std::vector<BreakdownRow>& rows, const std::string& cls, const std::string& label) {
  for (BreakdownRow& r : rows) {
    if (r.cls == cls && r.label == label) return r;
  }
  rows.push_back(BreakdownRow{cls, label});
  return rows.back();
}

}  // namespace

TrainBreakdown make_breakdown(const std::vector<gpu::StepProfiler::Op>& ops, double step_ms,
                              std::vector<GemmChoice> gemms) {
  TrainBreakdown b;
  b.step_ms = step_ms;
  for (const auto& op : ops) {
    for (BreakdownRow* r : {&row_for(b.classes, op.cls, ""), &row_for(b.ops, op.cls, op.label)}) {
      r->launches += 1;
      r->ms += op.ms;
      r->flop += op.flop;
      r->bytes += op.bytes;
    }
  }
  double profiled = 0;
  for (const BreakdownRow& r : b.classes) profiled += r.ms;
  // The rest of the step (idle time between kernels, kernels launched outside any operation) is
  // the "other" class's too.
  if (step_ms > profiled) {
    BreakdownRow& gap = row_for(b.classes, "other", "");
    gap.ms += step_ms - profiled;
    row_for(b.ops, "other", "idle and kernels outside operations").ms += step_ms - profiled;
  }
  std::sort(b.classes.begin(), b.classes.end(), [](const BreakdownRow& x, const BreakdownRow& y) { return x.ms > y.ms; });
  std::sort(gemms.begin(), gemms.end(), [](const auto& x, const auto& y) { return x.flop > y.flop; });
  b.gemms = std::move(gemms);
  return b;
}

}  // namespace ub::measure
