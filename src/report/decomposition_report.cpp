// The decomposition report; see decomposition_report.hpp.
#include "records/provenance.hpp"
#include "report/decomposition_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/format.hpp"
#include "report/log_comparison_views.hpp"

namespace ub::report {

ReportContent decomposition_report(const std::vector<DecompositionLog>& runs,
                                   const std::optional<DecompositionComparison>& comparison) {
  ReportContent r;
  std::vector<std::string> gpus;
  for (const DecompositionLog& d : runs) gpus.push_back(d.gpu.empty() ? "GPU unknown" : d.gpu);
  r.title = fmt::format("Where the step's time goes: {}", fmt::join(gpus, " vs "));
  std::vector<std::string> not_measured;
  for (const DecompositionLog& d : runs) {
    if (!d.provenance.measured()) not_measured.push_back(not_measured_line(d.path, d.provenance));
  }
  if (!not_measured.empty()) r.banner = fmt::format("{}", fmt::join(not_measured, "; ")), r.chart_tag = "EXAMPLE DATA";
  if (comparison) {
    const Document d = decomposition_comparison_document(*comparison);
    for (const Block& b : d.blocks) r.body.blocks.push_back(b);
  }
  Chart bars{"decomposition", "The step by bucket", "run", "ms per step", false, {}, {}, {}};
  // The buckets in the order the runs first name them; one bar per run.
  for (size_t k = 0; k < runs.size(); ++k) {
    const DecompositionLog& d = runs[k];
    bars.categories.push_back(fmt::format("{}{}", runs.size() > 1 ? (k == 0 ? "old: " : "new: ") : "", gpus[k]));
    double step = 0;
    for (const DecompositionBucket& b : d.buckets) {
      if (b.name != "TOTAL") step += b.ms;
    }
    auto& t = r.body.add(fmt::format("{}: {}", gpus[k], d.path));
    t.table.columns = {{"bucket", Align::left}, {"ms"}, {"share"}, {"TFLOPS"}};
    for (const DecompositionBucket& b : d.buckets) {
      if (b.name == "TOTAL") continue;
      t.table.add_row({b.name, num(b.ms, 2), percent(step > 0 ? b.ms / step : 0), num(b.tflops)});
      auto it = std::find_if(bars.series.begin(), bars.series.end(), [&](const Series& s) { return s.name == b.name; });
      if (it == bars.series.end()) {
        bars.series.push_back({b.name, {}});
        it = bars.series.end() - 1;
      }
      it->points.emplace_back(static_cast<double>(k), b.ms);
    }
    t.table.add_row({"step", num(step, 2), "100.0%", ""});
    for (const std::string& w : d.warnings) t.notes.push_back(w);
  }
  r.charts = {bars};
  return r;
}

}  // namespace ub::report
