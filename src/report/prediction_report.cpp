// The prediction report; see prediction_report.hpp.
#include "report/prediction_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "base/error.hpp"
#include "base/text.hpp"
#include "records/fields.hpp"
#include "analysis/predict/prediction_series.hpp"
#include "records/provenance.hpp"
#include "records/record_file.hpp"
#include "report/format.hpp"

namespace ub::report {

ReportContent prediction_report(const LineSource& t, const std::optional<RunLog>& measured_new) {
  ReportContent r;
  std::vector<std::string> warnings;
  std::string old_gpu, new_gpu;
  std::optional<double> break_even;
  Series speed{"PREDICTED speedup", {}}, measured_speed{"measured speedup", {}};
  Series old_ms{"old GPU (measured or carried)", {}}, new_ms{"new GPU (PREDICTED)", {}}, measured_ms{"new GPU (measured)", {}};
  Series old_usd{"old GPU", {}}, new_usd{"new GPU (PREDICTED)", {}};
  auto& tab = r.body.add("PREDICTED by sequence length");
  tab.table.columns = {{"seqlen"}, {"old GPU ms"}, {"PREDICTED ms"}, {"speedup"}, {"interval"},
                       {"limited by", Align::left}, {"per token", Align::left}};
  if (measured_new) tab.table.columns.insert(tab.table.columns.end(), {{"measured ms"}, {"predicted / measured"}});
  PredictionSeries series;
  std::vector<std::string> example_inputs;
  std::vector<int64_t> ran_out;  // lengths predicted where the measured new GPU ran out of memory
  for_each_record(t, [&](const RecordLine& line) {
    if (line.type != "prediction") return;
    const Fields f(line.json, line.where);
    if (const auto why = series.add(f)) {  // rows of two series under one title
      throw WorkError(fmt::format("{}: {}, as a report draws a file; give each its own file", line.where, *why));
    }
    old_gpu = f.string_or("old_gpu", ""), new_gpu = f.string_or("new_gpu", "");
    if (f.string_or("input_data", "MEASURED") != "MEASURED") example_inputs.push_back(printable(f.string_or("input", "?")));
    if (const auto b = f.optional_number("break_even")) break_even = b;
    const auto seqlen = f.optional_count("seqlen");
    const auto step = f.optional_number("step_ms"), sp = f.optional_number("speedup");
    const double old_step = f.number("old_step_ms");
    std::optional<double> lo, hi;
    if (line.json.contains("speedup_interval") && line.json["speedup_interval"].is_array() &&
        line.json["speedup_interval"].size() == 2) {
      lo = line.json["speedup_interval"][0].get<double>(), hi = line.json["speedup_interval"][1].get<double>();
    }
    // The new GPU's measured step at this length, once measured.
    std::optional<double> measured;
    const RunPoint* p = measured_new && seqlen ? measured_new->point(*seqlen) : nullptr;
    if (p && p->steps.has_steady()) measured = point_stats(*measured_new, *p).time_ms.median;
    const bool out_of_memory = p && !p->steps.has_steady();  // measured there, and it did not run
    if (out_of_memory) ran_out.push_back(*seqlen);
    std::vector<std::string> row = {seqlen ? std::to_string(*seqlen) : "-", num(old_step, 2), num(step, 2), ratio(sp),
                                    lo && hi ? fmt::format("{:.2f}-{:.2f}x", *lo, *hi) : "-",
                                    f.string_or("limiting", "-"), f.string_or("cost_verdict", "-")};
    if (measured_new) {
      row.push_back(out_of_memory ? "out of memory" : num(measured, 2));
      row.push_back(out_of_memory ? "did not run" : measured && step ? fmt::format("{:.3f}", *step / *measured) : "-");
    }
    tab.table.add_row(std::move(row));
    if (!seqlen) return;
    const double x = static_cast<double>(*seqlen);
    old_ms.points.emplace_back(x, old_step);
    if (step) new_ms.points.emplace_back(x, *step);
    if (sp) speed.points.emplace_back(x, *sp);
    if (lo && hi) speed.band.push_back({x, *lo, *hi});
    if (measured) {
      measured_ms.points.emplace_back(x, *measured);
      measured_speed.points.emplace_back(x, old_step / *measured);
    }
    if (const auto u = f.optional_number("usd_per_mtoken_old")) old_usd.points.emplace_back(x, *u);
    if (const auto u = f.optional_number("usd_per_mtoken_new")) new_usd.points.emplace_back(x, *u);
  }, warnings);
  if (tab.table.rows.empty()) throw WorkError(fmt::format("{}: no prediction records", t.path));
  r.title = fmt::format("PREDICTED: {} -> {}, by sequence length", old_gpu, new_gpu);
  r.chart_tag = "PREDICTED";
  r.banner = fmt::format("PREDICTED, NOT MEASURED on the {}: {} (predict's records; docs/predict.md)", new_gpu, t.path);
  if (measured_new) {
    r.banner = fmt::format("PREDICTED from {}, beside the {} measured in {}", t.path, new_gpu, measured_new->path);
    if (measured_ms.points.empty()) warnings.push_back(fmt::format("{}: no length measured that was predicted", measured_new->path));
    if (!ran_out.empty()) {
      r.alert = fmt::format("The {} ran out of memory at {} tokens, where a step was predicted: the prediction does not "
                            "hold there ({}).", new_gpu, fmt::join(ran_out, ", "), measured_new->path);
    }
  }
  // Example data on either side: the page and its charts say so, whatever else they are.
  std::vector<std::string> not_measured;
  if (!example_inputs.empty()) {
    std::sort(example_inputs.begin(), example_inputs.end());
    example_inputs.erase(std::unique(example_inputs.begin(), example_inputs.end()), example_inputs.end());
    not_measured.push_back(fmt::format("EXAMPLE DATA: predicted from {}, not measurements", fmt::join(example_inputs, ", ")));
  }
  if (measured_new && !measured_new->provenance.empty()) {
    not_measured.push_back(not_measured_line(measured_new->path, measured_new->provenance));
    measured_ms.name = "new GPU (EXAMPLE DATA)", measured_speed.name = "EXAMPLE DATA speedup";
  }
  if (!not_measured.empty()) {
    r.banner = fmt::format("{}; {}", fmt::join(not_measured, "; "), r.banner);
    r.chart_tag = "EXAMPLE DATA";
  }
  tab.notes = warnings;
  std::vector<Series> speeds = {speed}, steps = {old_ms, new_ms};
  if (!measured_ms.points.empty()) speeds.push_back(measured_speed), steps.push_back(measured_ms);
  Chart c_speed{"speedup", "PREDICTED speedup new/old (band: its interval)", "sequence length", "speedup (x)", true, speeds, {}, {}};
  if (break_even) c_speed.lines.push_back({fmt::format("break-even {:.2f}x", *break_even), *break_even});
  Chart c_step{"step", "Step time", "sequence length", "ms", true, steps, {}, {}};
  r.charts = {c_speed, c_step};
  if (!old_usd.points.empty()) {
    r.charts.push_back({"cost", "USD per million tokens", "sequence length", "USD / Mtoken", true, {old_usd, new_usd}, {}, {}});
  }
  return r;
}

}  // namespace ub::report
