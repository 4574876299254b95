// The prediction report; see prediction_report.hpp.
#include "report/prediction_report.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/records/fields.hpp"
#include "core/records/record_file.hpp"
#include "report/format.hpp"

namespace ub::report {

ReportContent prediction_report(const TextLines& t) {
  ReportContent r;
  std::vector<std::string> warnings;
  std::string old_gpu, new_gpu;
  std::optional<double> break_even;
  Series speed{"PREDICTED speedup", {}}, low{"interval low", {}}, high{"interval high", {}};
  Series old_ms{"old GPU (measured or carried)", {}}, new_ms{"new GPU (PREDICTED)", {}};
  Series old_usd{"old GPU", {}}, new_usd{"new GPU (PREDICTED)", {}};
  auto& tab = r.body.add("PREDICTED by sequence length");
  tab.table.columns = {{"seqlen"}, {"old GPU ms"}, {"PREDICTED ms"}, {"speedup"}, {"interval"},
                       {"limited by", Align::left}, {"per token", Align::left}};
  for_each_record(t, [&](const RecordLine& line) {
    if (line.type != "prediction") return;
    const Fields f(line.json, line.where);
    old_gpu = f.string_or("old_gpu", ""), new_gpu = f.string_or("new_gpu", "");
    if (const auto b = f.optional_number("break_even")) break_even = b;
    const auto seqlen = f.optional_count("seqlen");
    const auto step = f.optional_number("step_ms"), sp = f.optional_number("speedup");
    const double old_step = f.number("old_step_ms");
    std::optional<double> lo, hi;
    if (line.json.contains("speedup_interval") && line.json["speedup_interval"].is_array() &&
        line.json["speedup_interval"].size() == 2) {
      lo = line.json["speedup_interval"][0].get<double>(), hi = line.json["speedup_interval"][1].get<double>();
    }
    tab.table.add_row({seqlen ? std::to_string(*seqlen) : "-", num(old_step, 2), num(step, 2), ratio(sp),
                       lo && hi ? fmt::format("{:.2f}-{:.2f}x", *lo, *hi) : "-", f.string_or("limiting", "-"),
                       f.string_or("cost_verdict", "-")});
    if (!seqlen) return;
    const double x = static_cast<double>(*seqlen);
    old_ms.points.emplace_back(x, old_step);
    if (step) new_ms.points.emplace_back(x, *step);
    if (sp) speed.points.emplace_back(x, *sp);
    if (lo && hi) low.points.emplace_back(x, *lo), high.points.emplace_back(x, *hi);
    if (const auto u = f.optional_number("usd_per_mtoken_old")) old_usd.points.emplace_back(x, *u);
    if (const auto u = f.optional_number("usd_per_mtoken_new")) new_usd.points.emplace_back(x, *u);
  }, warnings);
  if (tab.table.rows.empty()) throw WorkError(fmt::format("{}: no prediction records", t.path));
  r.title = fmt::format("PREDICTED: {} -> {}, by sequence length", old_gpu, new_gpu);
  r.banner = fmt::format("PREDICTED, NOT MEASURED on the {}: {} (predict's records; docs/predict.md)", new_gpu, t.path);
  tab.notes = warnings;
  Chart c_speed{"speedup", "PREDICTED speedup new/old", "sequence length", "speedup (x)", true, {speed, low, high}, {}, {}};
  if (break_even) c_speed.lines.push_back({fmt::format("break-even {:.2f}x", *break_even), *break_even});
  Chart c_step{"step", "Step time", "sequence length", "ms", true, {old_ms, new_ms}, {}, {}};
  r.charts = {c_speed, c_step};
  if (!old_usd.points.empty()) {
    r.charts.push_back({"cost", "USD per million tokens", "sequence length", "USD / Mtoken", true, {old_usd, new_usd}, {}, {}});
  }
  return r;
}

}  // namespace ub::report
