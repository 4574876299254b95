// The decision page; see decision_page.hpp.
#include "report/decision_page.hpp"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "analysis/decision_summary.hpp"
#include "report/energy_view.hpp"
#include "report/format.hpp"
#include "report/log_comparison_views.hpp"
#include "report/nccl_views.hpp"
#include "report/run_reports.hpp"

namespace ub::report {

namespace {

using nlohmann::json;

std::string money(std::optional<double> v) { return v ? num(v, 3) : "-"; }

// The training step per length, each row tagged.
// A predicted speedup's range is its buckets' worst and best cases, not a statistical interval.
void training_block(Document& doc, const Comparison& c, const char* tag, bool predicted) {
  auto& b = doc.add("The training step per sequence length");
  b.table.columns = {{"seqlen"}, {"old TFLOPS"}, {"new TFLOPS"}, {"speedup"}, {predicted ? "predicted range" : "95% interval"},
                     {"verdict", Align::left},
                     {"old $/Mtok"}, {"new $/Mtok"}, {"cost new/old"}, {"time new/old"}, {"note", Align::left},
                     {"data", Align::left}};
  for (const CompareRow& r : c.rows) {
    b.table.add_row({std::to_string(r.seqlen), num(r.old_side.tflops), num(r.new_side.tflops),
                     r.speedup ? ratio(r.speedup->ratio) : "-",
                     r.speedup ? fmt::format("{:.2f}-{:.2f}", r.speedup->low, r.speedup->high) : "-",
                     r.speedup ? std::string(to_string(r.speedup->verdict)) : "-", money(r.old_side.usd_per_mtok),
                     money(r.new_side.usd_per_mtok), ratio(r.cost_ratio), ratio(r.wall_clock_ratio), r.note, tag});
  }
  b.notes.push_back(predicted ? "Speedup PREDICTED for the new GPU from the old GPU's measurements, bucket by bucket; its "
                                "range takes every bucket at its ratio's low end and at its high end, the worst and best "
                                "cases, not a statistical interval (docs/predict.md). "
                                "$/Mtok = USD per million tokens per GPU."
                              : "Speedup = old step time / new step time (medians of the steady steps), with the 95% "
                                "interval of the medians; verdict SAME within 2%. $/Mtok = USD per million tokens per GPU.");
  if (c.break_even) b.notes.push_back(fmt::format("Break-even speedup (price new / old): {:.2f}x.", *c.break_even));
  if (!predicted) add_energy_block(doc, c, tag);
}

// Each GPU's row tagged as what it is: the old GPU's is its own measurement's, a predicted new one PREDICTED.
void headroom_block(Document& doc, const UpgradeDecision& d, const char* tag) {
  auto& b = doc.add("Memory headroom: the longest sequence on one GPU (of the job measured)");
  b.table.columns = {{"GPU", Align::left}, {"longest sequence"}, {"how it is known", Align::left}, {"data", Align::left}};
  const char* old_tag = d.new_predicted ? d.old_provenance.tag() : tag;
  for (const auto& [gpu, l, row_tag] : {std::tuple{d.old_gpu, d.old_longest, old_tag}, std::tuple{d.new_gpu, d.new_longest, tag}}) {
    // The row says how the figure is known; the cell marks a fit carried far past its lengths.
    b.table.add_row({gpu, l.guess() || l.lower_bound ? l.cell() : l.tokens ? std::to_string(*l.tokens) : "unknown",
                     l.how.empty() ? "no sweep" : l.how, row_tag});
  }
}

// The memory question per lever (decide --levers): each set of levers' longest sequence on both
// GPUs and its step time against the run with the fewest.
void levers_block(Document& doc, const UpgradeDecision& d, const char* tag) {
  if (!d.levers) return;
  const LeverLadder& ladder = *d.levers;
  auto& b = doc.add("Memory levers: the longest sequence on one GPU per set of levers");
  b.table.columns = {{"levers", Align::left}};
  for (const LadderGpu& g : ladder.gpus) b.table.columns.push_back({fmt::format("longest on {}", g.name)});
  b.table.columns.push_back({"step time", Align::left});
  b.table.columns.push_back({"data", Align::left});
  for (const LeverRung& r : ladder.rungs) {
    std::vector<std::string> row = {r.levers.name()};
    for (const LongestSequence& l : r.longest) row.push_back(l.cell());
    row.push_back(ladder.cost_text(r));
    row.push_back(tag);
    b.table.add_row(row);
  }
  b.notes.push_back("Each run's memory fit read at each GPU's usable capacity, capped by a length it measured out of "
                    "memory on that GPU; step time against the run with the fewest levers, at the longest length both "
                    "measured.");
}

void ratios_block(Document& doc, const UpgradeDecision& d, const char* tag) {
  if (d.ratios.empty()) return;
  auto& b = doc.add("Micro-benchmarks against the catalog's ratios");
  b.table.columns = {{"what", Align::left}, {"old"}, {"new"}, {"unit", Align::left}, {"measured new/old"},
                     {"catalog new/old"}, {"data", Align::left}};
  for (const RatioRow& r : d.ratios) {
    b.table.add_row({r.what, num(r.old_value), num(r.new_value), r.unit, ratio(r.measured_ratio), ratio(r.catalog_ratio),
                     tag});
  }
  b.notes.push_back("The catalog's ratios: published MAMF for the ceiling, the dense bf16 peak for the step's "
                    "products, the datasheet HBM bandwidth for the copy.");
}

// A document's tables, each given a data column saying what its numbers are.
void append_tagged(Document& into, Document from, const char* tag) {
  for (Block& b : from.blocks) {
    if (!b.table.columns.empty()) {
      b.table.columns.push_back({"data", Align::left});
      for (auto& row : b.table.rows) row.push_back(tag);
    }
    into.blocks.push_back(std::move(b));
  }
}

void stack_block(Document& doc, const UpgradeDecision& d, const char* tag) {
  auto& b = doc.add("The two stacks");
  b.table.columns = {{"component", Align::left}, {"old", Align::left}, {"new", Align::left}, {"", Align::left},
                     {"data", Align::left}};
  std::map<std::string, std::pair<std::string, std::string>> rows;
  for (const auto& [k, v] : d.old_stack) rows[k].first = v;
  for (const auto& [k, v] : d.new_stack) rows[k].second = v;
  for (const auto& [k, v] : rows) {
    b.table.add_row({k, v.first.empty() ? "-" : v.first, v.second.empty() ? "-" : v.second,
                     v.first != v.second && !v.first.empty() && !v.second.empty() ? "differs" : "", tag});
  }
}

}  // namespace

ReportContent decision_page(const UpgradeDecision& d) {
  ReportContent r;
  const char* tag = d.provenance.tag();
  r.title = fmt::format("{} -> {}: {}", d.old_gpu, d.new_gpu, to_string(d.verdict));
  if (!d.provenance.measured()) {
    r.banner = d.provenance_notes.empty() ? fmt::format("{}: {}", tag, d.provenance.note)
                                          : fmt::format("{}", fmt::join(d.provenance_notes, "; "));
    r.chart_tag = tag;
  }
  std::vector<std::string> alerts;
  if (!d.forced_workload.empty()) {
    alerts.push_back(fmt::format("WORKLOAD DIFFERS between the two GPUs' training runs ({}): compared with --force, "
                                 "their speedups are of two workloads, not of two GPUs.", fmt::join(d.forced_workload, "; ")));
  }
  if (!d.stack_differences.empty()) {
    alerts.push_back(fmt::format("SOFTWARE DIFFERS between the two GPUs' measurements ({}): compared with --force, every "
                                 "figure below carries that difference.", fmt::join(d.stack_differences, "; ")));
  }
  r.alert = fmt::format("{}", fmt::join(alerts, " "));
  auto& lead = r.body.add("Verdict");
  if (!r.alert.empty()) lead.notes.push_back(r.alert);
  lead.notes.push_back(d.provenance.measured() ? d.line : fmt::format("[{}] {}", tag, d.line));
  r.lead_block = true;
  auto& why = r.body.add("Why, in the ml-engineering guide's order");
  why.notes = d.reasons;
  why.bulleted = true;
  if (d.training) training_block(r.body, *d.training, tag, d.new_predicted);
  headroom_block(r.body, d, tag);
  levers_block(r.body, d, tag);
  ratios_block(r.body, d, tag);
  if (d.ceiling) append_tagged(r.body, mamf_comparison_document(*d.ceiling), tag);
  if (d.attention) append_tagged(r.body, attention_comparison_document(*d.attention), tag);
  for (const DecompositionComparison& c : d.decompositions) append_tagged(r.body, decomposition_comparison_document(c), tag);
  if (d.nccl) append_tagged(r.body, nccl_comparison_document(*d.nccl), tag);
  // A prediction's stack is the old GPU's alone, as measured.
  if (!d.old_stack.empty() || !d.new_stack.empty()) stack_block(r.body, d, d.new_predicted ? d.old_provenance.tag() : tag);
  if (!d.warnings.empty()) {
    auto& w = r.body.add("Warnings");
    w.notes = d.warnings;
    w.bulleted = true;
  }
  if (d.training) {
    r.charts = comparison_charts(*d.training, decision_summary(*d.training));
    for (Chart& c : r.charts) {
      for (Series& s : c.series) s.name += fmt::format(" [{}]", tag);
      if (c.id == "speedup" && d.new_predicted) c.title = "Speedup new/old (band: predicted range, worst to best case)";
    }
  }
  return r;
}

json decision_json(const UpgradeDecision& d) {
  json ratios = json::array();
  for (const RatioRow& r : d.ratios) {
    ratios.push_back({{"what", r.what}, {"old", or_null(r.old_value)}, {"new", or_null(r.new_value)}, {"unit", r.unit},
                      {"measured_ratio", or_null(r.measured_ratio)}, {"catalog_ratio", or_null(r.catalog_ratio)}});
  }
  json rows = json::array();
  if (d.training) {
    for (const CompareRow& r : d.training->rows) {
      rows.push_back({{"seqlen", r.seqlen},
                      {"speedup", r.speedup ? json(r.speedup->ratio) : json()},
                      {"low", r.speedup ? json(r.speedup->low) : json()},
                      {"high", r.speedup ? json(r.speedup->high) : json()},
                      {"cost_ratio", or_null(r.cost_ratio)},
                      {"note", r.note}});
    }
  }
  const auto longest = [](const LongestSequence& l) {
    return json{{"tokens", or_null(l.tokens)}, {"measured", l.measured}, {"capped", l.capped}, {"how", l.how},
                {"guess", or_null(l.guess())}, {"at_least", l.lower_bound}, {"unsettled_below", or_null(l.unsettled_below)},
                {"batch", l.batch}};
  };
  json levers = json::array();
  if (d.levers) {
    for (const LeverRung& r : d.levers->rungs) {
      json on = json::object();
      for (size_t g = 0; g < d.levers->gpus.size(); ++g) on[d.levers->gpus[g].name] = longest(r.longest[g]);
      levers.push_back({{"levers", r.levers.name()}, {"run", r.run->path}, {"longest", on},
                        {"step_time_ratio", or_null(r.step_time_ratio)}, {"cost_at", or_null(r.cost_at)}});
    }
  }
  return {{"mode", "measurements"},
          {"verdict", to_string(d.verdict)},
          {"line", d.line},
          {"data", d.provenance.tag()},
          {"old_gpu", d.old_gpu},
          {"new_gpu", d.new_gpu},
          {"stack_differences", d.stack_differences},
          {"reasons", d.reasons},
          {"break_even", d.training ? or_null(d.training->break_even) : json()},
          {"speedup_range", d.new_predicted ? "predicted: the worst to the best case" : "95% interval of the medians"},
          {"lengths", rows},
          {"ratios", ratios},
          {"longest", {{"old", longest(d.old_longest)}, {"new", longest(d.new_longest)}}},
          {"levers", levers},
          {"warnings", d.warnings}};
}

}  // namespace ub::report
