// Aggregating and presenting a profiled step; see train_breakdown.hpp.
#include "measure/train_breakdown.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ub::measure {

using nlohmann::json;

namespace {

BreakdownRow& row_for(std::vector<BreakdownRow>& rows, const std::string& cls, const std::string& label) {
  for (BreakdownRow& r : rows) {
    if (r.cls == cls && r.label == label) return r;
  }
  rows.push_back(BreakdownRow{cls, label});
  return rows.back();
}

json row_json(const BreakdownRow& r, double step_ms) {
  json j = {{"class", r.cls}, {"ms", r.ms}, {"share", step_ms > 0 ? r.ms / step_ms : 0}, {"launches", r.launches}};
  if (!r.label.empty()) j["label"] = r.label;
  if (r.flop > 0) j["flop"] = r.flop, j["tflops"] = r.tflops();
  if (r.bytes > 0) j["bytes"] = r.bytes, j["gbps"] = r.gbps();
  return j;
}

std::string rate(const BreakdownRow& r) {
  if (r.flop > 0) return fmt::format("{:7.1f} TFLOPS", r.tflops());
  if (r.bytes > 0) return fmt::format("{:7.0f} GB/s  ", r.gbps());
  return std::string(14, ' ');
}

}  // namespace

Breakdown make_breakdown(const std::vector<gpu::StepProfiler::Op>& ops, double step_ms,
                         std::vector<gpu::LinearGemm::Choice> gemms) {
  Breakdown b;
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
  // Time between the profiled operations (launch gaps, host work) is the "other" class's too.
  if (step_ms > profiled) {
    BreakdownRow& gap = row_for(b.classes, "other", "");
    gap.ms += step_ms - profiled;
    row_for(b.ops, "other", "gaps between operations").ms += step_ms - profiled;
  }
  std::sort(b.classes.begin(), b.classes.end(), [](const BreakdownRow& x, const BreakdownRow& y) { return x.ms > y.ms; });
  std::sort(gemms.begin(), gemms.end(), [](const auto& x, const auto& y) { return x.flop > y.flop; });
  b.gemms = std::move(gemms);
  return b;
}

json Breakdown::to_json() const {
  json j = {{"step_ms", step_ms}, {"classes", json::array()}, {"ops", json::array()}, {"gemm_algorithms", json::array()}};
  for (const BreakdownRow& r : classes) j["classes"].push_back(row_json(r, step_ms));
  for (const BreakdownRow& r : ops) j["ops"].push_back(row_json(r, step_ms));
  for (const auto& g : gemms) {
    j["gemm_algorithms"].push_back({{"shape", g.shape}, {"flop", g.flop}, {"candidates", g.candidates},
                                    {"chosen_rank", g.chosen_rank}, {"first_ms", g.first_ms}, {"best_ms", g.best_ms},
                                    {"tflops", g.best_ms > 0 ? g.flop / 1e12 / (g.best_ms * 1e-3) : 0.0}});
  }
  return j;
}

std::string Breakdown::table() const {
  std::string t = fmt::format("breakdown of one profiled step: {:.2f} ms\n", step_ms);
  for (const BreakdownRow& r : classes) {
    t += fmt::format("  {:<18} {:9.2f} ms {:5.1f}%  {}\n", r.cls, r.ms, 100 * r.ms / step_ms, rate(r));
  }
  t += "  by operation:\n";
  for (const BreakdownRow& r : ops) {
    t += fmt::format("    {:<18} {:<28} {:4}x {:9.2f} ms  {}\n", r.cls, r.label, r.launches, r.ms, rate(r));
  }
  return t;
}

}  // namespace ub::measure
