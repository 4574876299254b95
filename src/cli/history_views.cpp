// The documents and JSON of `history`; see history_views.hpp.
#include "cli/history_views.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/text.hpp"
#include "records/fields.hpp"

namespace ub::cli {

using nlohmann::json;
using report::Align;
using report::Document;

namespace {

std::string figure_text(double v) {
  if (v >= 1000) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.3g}", v);
}

std::string interval_text(const Estimate& f) {
  if (f.n <= 1 && f.low == f.high) return "one figure";
  return fmt::format("[{}, {}]", figure_text(f.low), figure_text(f.high));
}

std::string point_text(const std::string& metric, double x) {
  if (x == 0) return "-";
  if (metric.rfind("nccl.", 0) == 0 || metric.rfind("bandwidth.", 0) == 0) return binary_size_text(static_cast<int64_t>(x));
  return fmt::format("{}", x);
}

json figure_json(const Estimate& f) { return {{"median", f.median}, {"low", f.low}, {"high", f.high}, {"n", f.n}}; }
json change_json(const Change& c) {
  return {{"change", c.change}, {"low", c.low}, {"high", c.high}, {"significant", c.significant()}};
}

json metric_json(const MetricPoint& m) {
  json j = {{"metric", m.metric}, {"x", m.x},     {"gpu", m.gpu},   {"n", m.n},
            {"median", m.median}, {"low", m.low}, {"high", m.high}, {"throttle", clock_reason_names(m.throttle)}};
  if (m.sm_clock_mhz) j["sm_clock_mhz"] = *m.sm_clock_mhz;
  if (m.power_w) j["power_w"] = *m.power_w;
  if (m.temperature_c) j["temperature_c"] = *m.temperature_c;
  return j;
}

// MEASURED, PREDICTED or EXAMPLE DATA (provenance.hpp), as every other page tags its rows.
std::string data_tag(const history::RunSummary& r) {
  if (r.kind == "prediction") return "PREDICTED";
  return r.provenance.empty() ? "MEASURED" : "EXAMPLE DATA";
}

json summary_json(const history::RunSummary& r) {
  return {{"id", r.id},         {"key", r.key},       {"kind", r.kind},   {"command", r.command}, {"format", r.format},
          {"date", r.date},     {"host", r.host},     {"model", r.model}, {"gpu", r.gpu},         {"gpus", r.gpus},
          {"source", r.source}, {"added", r.added},   {"lines", r.lines}, {"metrics", r.metrics},
          {"workload", r.workload}, {"data", data_tag(r)}, {"provenance", r.provenance}};
}

}  // namespace

std::string change_text(const Change& c) {
  return fmt::format("{:+.1f}% [{:+.1f}%, {:+.1f}%]", c.change * 100, c.low * 100, c.high * 100);
}

Document added_document(const FileOutcomes& files, const std::string& db) {
  Document doc;
  auto& b = doc.add("Added to " + db);
  b.table.columns = {{"file", Align::left}, {"run"}, {"status", Align::left}, {"kind", Align::left},
                     {"command", Align::left}, {"date", Align::left}, {"lines"}, {"figures"}};
  size_t added = 0, grown = 0, unchanged = 0, same = 0;
  for (const auto& [file, outcomes] : files) {
    for (const history::AddOutcome& o : outcomes) {
      b.table.add_row({printable(file), std::to_string(o.run_id), std::string(history::to_string(o.status)), o.kind,
                       printable(o.command), o.date, std::to_string(o.lines), std::to_string(o.metrics)});
      added += o.status == history::AddStatus::added;
      grown += o.status == history::AddStatus::grown;
      unchanged += o.status == history::AddStatus::unchanged;
      same += o.status == history::AddStatus::same_measurement;
    }
  }
  b.notes.push_back(fmt::format("{} runs added, {} grown, {} already stored", added, grown, unchanged));
  if (same > 0) {
    b.notes.push_back(fmt::format("{} run{} not stored: the same figures as the run named in its row, under another "
                                  "context or header (a copy of one measurement)", same, same == 1 ? "" : "s"));
  }
  return doc;
}

json added_json(const FileOutcomes& files, const std::string& db) {
  json out = {{"database", db}, {"files", json::array()}};
  for (const auto& [file, outcomes] : files) {
    json runs = json::array();
    for (const history::AddOutcome& o : outcomes) {
      runs.push_back({{"id", o.run_id}, {"key", o.key}, {"status", history::to_string(o.status)}, {"kind", o.kind},
                      {"command", o.command}, {"date", o.date}, {"lines", o.lines}, {"figures", o.metrics}});
    }
    out["files"].push_back({{"file", file}, {"runs", runs}});
  }
  return out;
}

Document list_document(const std::vector<history::RunSummary>& runs, size_t limit) {
  Document doc;
  auto& b = doc.add("Runs");
  b.table.columns = {{"id"}, {"date", Align::left}, {"command", Align::left}, {"kind", Align::left}, {"GPU", Align::left},
                     {"GPUs"}, {"host", Align::left}, {"workload", Align::left}, {"figures"}, {"data", Align::left},
                     {"source", Align::left}};
  for (const history::RunSummary& r : runs) {
    b.table.add_row({std::to_string(r.id), r.date, printable(r.command), r.kind, printable(r.gpu), std::to_string(r.gpus),
                     printable(r.host), printable(r.workload.empty() ? r.model : r.workload), std::to_string(r.metrics),
                     data_tag(r), printable(r.source)});
  }
  if (runs.empty()) b.notes.push_back("no run matches");
  if (runs.size() == limit) b.notes.push_back(fmt::format("the first {} runs: narrow the filters or raise --limit", limit));
  return doc;
}

json list_json(const std::vector<history::RunSummary>& runs) {
  json out = json::array();
  for (const history::RunSummary& r : runs) out.push_back(summary_json(r));
  return {{"runs", out}};
}

Document show_document(const history::RunDetail& d) {
  Document doc;
  auto& head = doc.add(fmt::format("Run {}", d.run.id));
  head.table.columns = {{"", Align::left}, {"", Align::left}};
  head.table.add_row({"key", d.run.key});
  head.table.add_row({"command", printable(d.run.command)});
  head.table.add_row({"kind", d.run.kind});
  head.table.add_row({"format", printable(d.run.format)});
  head.table.add_row({"date", d.run.date});
  head.table.add_row({"host", printable(d.run.host)});
  head.table.add_row({"model", printable(d.run.model)});
  head.table.add_row({"workload", printable(d.run.workload)});
  head.table.add_row({"GPUs", std::to_string(d.run.gpus)});
  head.table.add_row({"source", printable(d.run.source)});
  head.table.add_row({"added", d.run.added});
  head.table.add_row({"lines", std::to_string(d.run.lines)});
  if (!d.run.provenance.empty()) head.notes.push_back(data_tag(d.run) + ": " + printable(d.run.provenance));
  auto& gpus = doc.add("GPUs");
  gpus.table.columns = {{"index"}, {"name", Align::left}, {"UUID", Align::left}};
  for (const StoredGpu& g : d.gpus) gpus.table.add_row({std::to_string(g.index), printable(g.name), printable(g.uuid)});
  auto& stack = doc.add("Stack");
  stack.table.columns = {{"component", Align::left}, {"version", Align::left}};
  for (const auto& [c, v] : d.stack) stack.table.add_row({printable(c), printable(v)});
  auto& figures = doc.add("Figures");
  figures.table.columns = {{"metric", Align::left}, {"point"}, {"GPU"}, {"median"}, {"95% interval", Align::left}, {"n"}, {"unit", Align::left}};
  for (const MetricPoint& m : d.metrics) {
    figures.table.add_row({m.metric, point_text(m.metric, m.x), std::to_string(m.gpu), figure_text(m.median),
                           interval_text({m.median, m.low, m.high, m.n}), std::to_string(m.n), metric_unit(m.metric)});
  }
  return doc;
}

json show_json(const history::RunDetail& d) {
  json j = summary_json(d.run);
  j["provenance"] = d.run.provenance;
  j["gpu_list"] = json::array();
  for (const StoredGpu& g : d.gpus) j["gpu_list"].push_back({{"index", g.index}, {"name", g.name}, {"uuid", g.uuid}});
  j["stack"] = json::object();
  for (const auto& [c, v] : d.stack) j["stack"][c] = v;
  j["figures"] = json::array();
  for (const MetricPoint& m : d.metrics) j["figures"].push_back(metric_json(m));
  return j;
}

Document metrics_document(const std::vector<history::MetricInfo>& metrics) {
  Document doc;
  auto& b = doc.add("Metrics");
  b.table.columns = {{"metric", Align::left}, {"unit", Align::left}, {"runs"}, {"points", Align::left}};
  for (const history::MetricInfo& m : metrics) {
    std::vector<std::string> points;
    for (double x : m.points) points.push_back(point_text(m.metric, x));
    b.table.add_row({m.metric, metric_unit(m.metric), std::to_string(m.runs), fmt::format("{}", fmt::join(points, " "))});
  }
  if (metrics.empty()) b.notes.push_back("no figures stored yet: add runs with `upgradebench history add FILE`");
  return doc;
}

json metrics_json(const std::vector<history::MetricInfo>& metrics) {
  json out = json::array();
  for (const history::MetricInfo& m : metrics) {
    out.push_back({{"metric", m.metric}, {"unit", metric_unit(m.metric)}, {"runs", m.runs}, {"points", m.points}});
  }
  return {{"metrics", out}};
}

namespace {

// "NVIDIA H200, llama-3.1-8b, 4 of 32 layers, 1 GPU, ZeRO-0, bf16, batch 1": what a series holds.
std::string series_text(const std::string& gpu, const std::string& workload) {
  const std::string name = gpu.empty() ? "GPU unknown" : printable(gpu);
  return workload.empty() ? name : name + ", " + printable(workload);
}

void add_trend(Document& doc, const Trend& t, size_t series) {
  const std::string at = t.x == 0 ? "" : " at " + point_text(t.metric, t.x);
  auto& g = doc.add(fmt::format("{}{}{} ({}, {} is better): {}", t.metric, at, t.by.empty() ? " over time" : " by " + t.by,
                                t.unit, t.higher_is_better ? "higher" : "lower", series_text(t.gpu, t.workload)));
  if (series > 1) {
    g.notes.push_back(fmt::format("{} series of unlike runs (another GPU model or workload): each is its own trend, "
                                  "never pooled", series));
  }
  if (t.runs.size() == 1) g.notes.push_back("one run in this series: no change to show until another run of this GPU and workload");
  if (t.undated > 0) {
    g.notes.push_back(fmt::format("{} run{} without a date left out: a trend over time needs its runs' dates (--by "
                                  "COMPONENT orders by version instead)", t.undated, t.undated == 1 ? "" : "s"));
  }
  std::vector<std::string> examples;
  for (const TrendRun& r : t.runs) {
    if (r.example_data) examples.push_back(std::to_string(r.run_id));
  }
  if (!examples.empty()) {
    g.notes.push_back(fmt::format("EXAMPLE DATA: run{} {} say{} {} not measurements (history show ID)", examples.size() == 1 ? "" : "s",
                                  fmt::join(examples, ", "), examples.size() == 1 ? "s" : "", examples.size() == 1 ? "it is" : "they are"));
  }
  g.table.columns = {{t.by.empty() ? "date" : t.by, Align::left}, {"runs"}, {"first run", Align::left}, {"median"},
                     {"95% interval", Align::left}, {"change", Align::left}};
  for (size_t i = 0; i < t.groups.size(); ++i) {
    const TrendGroup& gr = t.groups[i];
    g.table.add_row({printable(gr.label), std::to_string(gr.run_ids.size()), gr.first_date, figure_text(gr.figure.median),
                     interval_text(gr.figure), i == 0 ? "" : change_text(t.steps[i - 1].change)});
  }
  for (const TrendStep& s : t.steps) {
    if (s.change.significant()) {
      g.notes.push_back(fmt::format("{} -> {}: {}", printable(s.from), printable(s.to), change_text(s.change)));
    }
  }
  if (t.overall) {
    g.notes.push_back(fmt::format("overall {} -> {}: {}", printable(t.overall->from), printable(t.overall->to),
                                  change_text(t.overall->change)));
  }
  g.notes.push_back("change: the next group's median over the previous one's, its interval crosswise from the two "
                    "groups' 95% intervals; a group pools its runs and their GPUs (the lowest low to the highest high)");
  auto& r = doc.add("Runs");
  r.table.columns = {{"run"}, {"date", Align::left}, {"GPU", Align::left}, {"host", Align::left}};
  if (!t.by.empty()) r.table.columns.push_back({t.by, Align::left});
  r.table.columns.insert(r.table.columns.end(), {{"median"}, {"95% interval", Align::left}, {"n"}});
  for (const TrendRun& run : t.runs) {
    const std::string gpu = run.gpu_index ? fmt::format("{} (GPU {})", printable(run.gpu), *run.gpu_index) : printable(run.gpu);
    std::vector<std::string> row{std::to_string(run.run_id), run.date, gpu, printable(run.host)};
    if (!t.by.empty()) row.push_back(run.version.empty() ? "unknown" : printable(run.version));
    row.insert(row.end(), {figure_text(run.figure.median), interval_text(run.figure), std::to_string(run.figure.n)});
    r.table.add_row(std::move(row));
  }
}

json one_trend_json(const Trend& t) {
  json j = {{"gpu", t.gpu}, {"workload", t.workload}, {"groups", json::array()}, {"steps", json::array()},
            {"runs", json::array()}};
  for (const TrendGroup& g : t.groups) {
    j["groups"].push_back({{"label", g.label}, {"runs", g.run_ids}, {"first_date", g.first_date}, {"figure", figure_json(g.figure)}});
  }
  for (const TrendStep& s : t.steps) j["steps"].push_back({{"from", s.from}, {"to", s.to}, {"change", change_json(s.change)}});
  if (t.overall) j["overall"] = {{"from", t.overall->from}, {"to", t.overall->to}, {"change", change_json(t.overall->change)}};
  for (const TrendRun& r : t.runs) {
    j["runs"].push_back({{"run", r.run_id}, {"date", r.date}, {"gpu", r.gpu}, {"gpu_index", or_null(r.gpu_index)},
                         {"host", r.host}, {"version", r.version}, {"figure", figure_json(r.figure)}, {"data", r.example_data ? "EXAMPLE DATA" : "MEASURED"}});
  }
  return j;
}

}  // namespace

Document trend_document(const std::vector<Trend>& series) {
  Document doc;
  for (const Trend& t : series) add_trend(doc, t, series.size());
  return doc;
}

json trend_json(const std::vector<Trend>& series) {
  const Trend& t = series.front();
  json j = {{"metric", t.metric}, {"unit", t.unit}, {"x", t.x}, {"by", t.by}, {"higher_is_better", t.higher_is_better},
            {"series", json::array()}};
  for (const Trend& one : series) j["series"].push_back(one_trend_json(one));
  return j;
}

namespace {

void add_fleet(Document& doc, const Fleet& f, size_t series) {
  const std::string at = f.x == 0 ? "" : " at " + point_text(f.metric, f.x);
  const char* gpus = f.gpus.size() == 1 ? "GPU" : "GPUs";
  auto& b = doc.add(fmt::format("{}{} across {} {} ({}, {} is better): {}", f.metric, at, f.gpus.size(), gpus, f.unit,
                                f.higher_is_better ? "higher" : "lower", series_text(f.gpu_model, f.workload)));
  if (series > 1) {
    b.notes.push_back(fmt::format("{} fleets of unlike runs (another GPU model or workload): a GPU is measured against "
                                  "its own fleet only", series));
  }
  b.table.columns = {{"GPU", Align::left}, {"name", Align::left}, {"host", Align::left}, {"runs"}, {"median"},
                     {"95% interval", Align::left}, {"vs fleet"}, {"status", Align::left}, {"SM MHz"}, {"W"}, {"C"},
                     {"clock events", Align::left}, {"why", Align::left}};
  for (const FleetGpu& g : f.gpus) {
    b.table.add_row({printable(g.id), printable(g.name), printable(g.host), std::to_string(g.run_ids.size()),
                     figure_text(g.figure.median), interval_text(g.figure), fmt::format("{:+.1f}%", g.deviation * 100),
                     std::string(to_string(g.status)), g.sm_clock_mhz ? fmt::format("{:.0f}", *g.sm_clock_mhz) : "-",
                     g.power_w ? fmt::format("{:.0f}", *g.power_w) : "-",
                     g.temperature_c ? fmt::format("{:.0f}", *g.temperature_c) : "-",
                     fmt::format("{}", fmt::join(clock_reason_names(g.throttle & clock_reason::throttling), " ")), g.why});
  }
  b.notes.push_back(fmt::format("fleet median {} {} {}, over {} {}", figure_text(f.median.median), f.unit,
                                interval_text(f.median), f.gpus.size(), gpus));
  size_t flagged = 0;
  for (const FleetGpu& g : f.gpus) flagged += g.status != FleetStatus::typical;
  b.notes.push_back(fmt::format("{} GPUs flagged: a GPU's whole 95% interval beyond {:.1f}% of the fleet's median", flagged,
                                f.tolerance * 100));
  if (f.gpus.size() == 1) b.notes.push_back("one GPU in this fleet: nothing to measure it against");
  if (!f.stack_spread.empty()) {
    b.notes.push_back(fmt::format("its runs ran on more than one stack ({}): a GPU apart from the fleet may be its "
                                  "software's doing; hold a version with --stack COMPONENT=VERSION",
                                  fmt::join(f.stack_spread, "; ")));
  }
  if (f.unplaced > 0) {
    b.notes.push_back(fmt::format("{} of these GPUs are known only by their run (\"run N/gpuI\"): their logs name neither "
                                  "a UUID nor a host, so nothing says two runs had the same card", f.unplaced));
  }
}

json one_fleet_json(const Fleet& f) {
  json j = {{"gpu_model", f.gpu_model}, {"workload", f.workload}, {"median", figure_json(f.median)}, {"gpus", json::array()}};
  if (f.median_clock) j["median_sm_clock_mhz"] = *f.median_clock;
  j["gpus_known_only_by_run"] = f.unplaced;
  j["stack_spread"] = f.stack_spread;
  for (const FleetGpu& g : f.gpus) {
    json x = {{"id", g.id},        {"name", g.name},           {"host", g.host},
              {"runs", g.run_ids}, {"figure", figure_json(g.figure)}, {"deviation", g.deviation},
              {"status", to_string(g.status)}, {"why", g.why},  {"throttle", clock_reason_names(g.throttle)}};
    if (g.sm_clock_mhz) x["sm_clock_mhz"] = *g.sm_clock_mhz;
    if (g.power_w) x["power_w"] = *g.power_w;
    if (g.temperature_c) x["temperature_c"] = *g.temperature_c;
    j["gpus"].push_back(x);
  }
  return j;
}

}  // namespace

Document fleet_document(const std::vector<Fleet>& series) {
  Document doc;
  for (const Fleet& f : series) add_fleet(doc, f, series.size());
  return doc;
}

json fleet_json(const std::vector<Fleet>& series) {
  const Fleet& f = series.front();
  json j = {{"metric", f.metric}, {"unit", f.unit}, {"x", f.x}, {"tolerance", f.tolerance},
            {"higher_is_better", f.higher_is_better}, {"fleets", json::array()}};
  for (const Fleet& one : series) j["fleets"].push_back(one_fleet_json(one));
  return j;
}

}  // namespace ub::cli
