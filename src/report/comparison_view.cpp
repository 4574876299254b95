// Rendering of a comparison; see comparison_view.hpp.
#include "records/provenance.hpp"
#include "report/comparison_view.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "report/energy_view.hpp"
#include "report/format.hpp"

namespace ub::report {

namespace {

using nlohmann::json;

json opt(std::optional<double> v) { return v ? json(*v) : json(); }

json step_time_json(const SideFigures& s) {
  if (!s.step_time) return nullptr;
  const Summary& t = *s.step_time;
  return {{"steps", t.n}, {"median", t.median}, {"mean", t.mean}, {"min", t.min}, {"max", t.max},
          {"median_low", t.median_low}, {"median_high", t.median_high}};
}

std::string gpu_label(const RunLog& r, const Accelerator* a) {
  return a ? fmt::format("{} ({})", r.gpu, a->id) : fmt::format("{} (not in catalog)", r.gpu.empty() ? "unknown GPU" : r.gpu);
}

std::string cell(const SideFigures& s, std::optional<double> v, int precision = 1) {
  if (s.status == "oom") return "OOM";
  if (s.status == "absent") return "-";
  return num(v, precision);
}

// A mixture of experts' routing beside the figures: each side's tokens per expert, where its run
// says them (dropless routing waits on the busiest expert, and routing may differ between runs).
void add_expert_block(Document& doc, const Comparison& c) {
  const bool any = std::any_of(c.rows.begin(), c.rows.end(), [](const CompareRow& r) {
    return r.old_side.expert_tokens || r.new_side.expert_tokens;
  });
  if (!any) return;
  auto& b = doc.add("Tokens per expert (a layer's expert in one step)");
  b.table.columns = {{"seqlen"}, {"old min"}, {"old median"}, {"old max"}, {"new min"}, {"new median"}, {"new max"}};
  for (const CompareRow& r : c.rows) {
    std::vector<std::string> row = {fmt::format("{}", r.seqlen)};
    for (const SideFigures* side : {&r.old_side, &r.new_side}) {
      for (auto field : {&TrainStep::ExpertTokens::min, &TrainStep::ExpertTokens::median, &TrainStep::ExpertTokens::max}) {
        row.push_back(side->expert_tokens ? num((*side->expert_tokens).*field, 1) : "-");
      }
    }
    b.table.add_row(std::move(row));
  }
  b.notes.push_back("Least, median and most tokens an expert of an MoE layer took in a step, over the steady steps. "
                    "Routing is dropless: the busiest expert sets the pace, so runs whose balance differs do not time "
                    "the same work.");
}

}  // namespace

std::string forced_headline(const std::vector<std::string>& warnings) {
  std::vector<std::string> forced;
  for (const std::string& w : warnings) {
    if (w.rfind("forced: ", 0) == 0) forced.push_back(w.substr(8));
  }
  if (forced.empty()) return "";
  return fmt::format("FORCED: two workloads compared with --force ({}): the ratios below carry that difference, not the "
                     "GPUs' alone.", fmt::join(forced, "; "));
}

Document comparison_document(const Comparison& c) {
  Document doc;
  auto& head = doc.add(fmt::format("old: {}  ->  new: {}", gpu_label(c.old_run, c.old_gpu),
                                   gpu_label(c.new_run, c.new_gpu)));
  // What --force compared across is said first (and again among the warnings).
  if (const std::string forced = forced_headline(c.warnings); !forced.empty()) head.notes.push_back(forced);
  for (const RunLog* r : {&c.old_run, &c.new_run}) {
    if (!r->provenance.empty()) {
      head.notes.push_back(not_measured_line(r->path, r->provenance));
      doc.data_tag = example_if_noted(r->provenance).tag();
    }
  }
  head.notes.push_back(fmt::format("Hardware ratios from the catalog (new/old): peak {} {}, published MAMF {}, "
                                   "HBM bandwidth {}.", c.old_run.dtype, ratio(c.peak_ratio),
                                   ratio(c.mamf_ratio), ratio(c.bandwidth_ratio)));
  if (c.model) {
    head.notes.push_back(fmt::format("Model {} ({} layers), batch {} per GPU, {}.", c.model->id, c.model->layers,
                                     c.old_run.batch == c.new_run.batch
                                         ? std::to_string(c.old_run.batch)
                                         : fmt::format("{} (old) vs {} (new)", c.old_run.batch, c.new_run.batch),
                                     c.old_run.dtype));
  }
  if (c.stack_mismatch) {
    head.notes.push_back("WARNING: the two runs ran on different software (below): part of any "
                         "difference is the software, not the GPU.");
  }

  auto& t = doc.add("Per sequence length");
  const bool priced = c.break_even.has_value();
  const bool timed = !c.rows.empty() && (c.rows.front().old_side.hours_to_train || c.rows.front().new_side.hours_to_train);
  t.table.columns = {{"seqlen"}, {"old TFLOPS"}, {"new TFLOPS"}, {"speedup"}, {"95% interval"},
                     {"verdict", Align::left}, {"attn share"}, {"old MFU"}, {"new MFU"},
                     {"old GiB"}, {"new GiB"}};
  if (priced) {
    t.table.columns.push_back({"old $/Mtok"});
    t.table.columns.push_back({"new $/Mtok"});
    t.table.columns.push_back({"cost new/old"});
  }
  t.table.columns.push_back({"time new/old"});
  if (timed) {
    t.table.columns.push_back({"old hours"});
    t.table.columns.push_back({"new hours"});
  }
  t.table.columns.push_back({"note", Align::left});
  for (const CompareRow& r : c.rows) {
    std::vector<std::string> row = {
        fmt::format("{}", r.seqlen), cell(r.old_side, r.old_side.tflops), cell(r.new_side, r.new_side.tflops),
        r.speedup ? fmt::format("{:.2f}x", r.speedup->ratio) : "-",
        r.speedup ? fmt::format("{:.2f}-{:.2f}", r.speedup->low, r.speedup->high) : "-",
        r.speedup ? std::string(to_string(r.speedup->verdict)) : "-",
        percent(r.attention_share), cell(r.old_side, r.old_side.mfu ? std::optional<double>(*r.old_side.mfu * 100) : std::nullopt),
        cell(r.new_side, r.new_side.mfu ? std::optional<double>(*r.new_side.mfu * 100) : std::nullopt),
        cell(r.old_side, r.old_side.peak_gib), cell(r.new_side, r.new_side.peak_gib)};
    if (priced) {
      row.push_back(cell(r.old_side, r.old_side.usd_per_mtok, 3));
      row.push_back(cell(r.new_side, r.new_side.usd_per_mtok, 3));
      row.push_back(ratio(r.cost_ratio));
    }
    row.push_back(ratio(r.wall_clock_ratio));
    if (timed) {
      row.push_back(cell(r.old_side, r.old_side.hours_to_train));
      row.push_back(cell(r.new_side, r.new_side.hours_to_train));
    }
    row.push_back(r.note);
    t.table.add_row(std::move(row));
  }
  t.notes.push_back(fmt::format(
      "TFLOPS per GPU: median of the steady steps (model FLOPs, MFU convention). MFU in %. Speedup = old {0} / new {0}, "
      "with the 95% interval of the medians; verdict SAME within 2%, AMBIGUOUS when the interval is wider and contains "
      "1, FEW STEPS when a side has fewer than 6 steady steps (no 95% interval of a median exists there: the range "
      "shown is the steps' own, and no verdict is drawn).",
      c.old_run.batch == c.new_run.batch ? "step time" : "time per token (their batches differ)"));
  if (priced) {
    t.notes.push_back(fmt::format("Break-even speedup (price new/old): {:.2f}x. $/Mtok = USD per million "
                                  "tokens per GPU.", *c.break_even));
  }
  add_energy_block(doc, c);
  add_expert_block(doc, c);
  // Per-point statistics of the step times (steady steps only).
  auto& st = doc.add("Step time statistics (ms, steady steps)");
  st.table.columns = {{"seqlen"}, {"old n"}, {"old median"}, {"old mean"}, {"old min"}, {"old max"}, {"old 95% of median"},
                      {"new n"}, {"new median"}, {"new mean"}, {"new min"}, {"new max"}, {"new 95% of median"}};
  if (priced) {
    st.table.columns.push_back({"old $/step"});
    st.table.columns.push_back({"new $/step"});
  }
  for (const CompareRow& r : c.rows) {
    std::vector<std::string> row = {fmt::format("{}", r.seqlen)};
    for (const SideFigures* s : {&r.old_side, &r.new_side}) {
      if (!s->step_time) {
        for (int i = 0; i < 6; ++i) row.push_back(s->status == "oom" ? "OOM" : "-");
        continue;
      }
      const Summary& x = *s->step_time;
      row.push_back(fmt::format("{}", x.n));
      row.push_back(num(x.median));
      row.push_back(num(x.mean));
      row.push_back(num(x.min));
      row.push_back(num(x.max));
      row.push_back(fmt::format("{:.1f}-{:.1f}", x.median_low, x.median_high));
    }
    if (priced) {
      row.push_back(cell(r.old_side, r.old_side.usd_per_step, 4));
      row.push_back(cell(r.new_side, r.new_side.usd_per_step, 4));
    }
    st.table.add_row(std::move(row));
  }
  if (!c.warnings.empty()) {
    auto& w = doc.add("Warnings");
    w.notes = c.warnings;
    w.bulleted = true;
  }
  return doc;
}

json comparison_json(const Comparison& c) {
  json rows = json::array();
  for (const CompareRow& r : c.rows) {
    rows.push_back({{"seqlen", r.seqlen},
                    {"old_tflops", opt(r.old_side.tflops)},
                    {"new_tflops", opt(r.new_side.tflops)},
                    {"speedup", r.speedup ? json(r.speedup->ratio) : json()},
                    {"speedup_low", r.speedup ? json(r.speedup->low) : json()},
                    {"speedup_high", r.speedup ? json(r.speedup->high) : json()},
                    {"verdict", r.speedup ? json(to_string(r.speedup->verdict)) : json()},
                    {"attention_share", opt(r.attention_share)},
                    {"old_mfu", opt(r.old_side.mfu)},
                    {"new_mfu", opt(r.new_side.mfu)},
                    {"old_peak_gib", opt(r.old_side.peak_gib)},
                    {"new_peak_gib", opt(r.new_side.peak_gib)},
                    {"old_status", r.old_side.status},
                    {"new_status", r.new_side.status},
                    {"old_step_ms", opt(r.old_side.step_ms)},
                    {"new_step_ms", opt(r.new_side.step_ms)},
                    {"old_step_time_ms", step_time_json(r.old_side)},
                    {"new_step_time_ms", step_time_json(r.new_side)},
                    {"old_usd_per_step", opt(r.old_side.usd_per_step)},
                    {"new_usd_per_step", opt(r.new_side.usd_per_step)},
                    {"old_usd_per_mtok", opt(r.old_side.usd_per_mtok)},
                    {"new_usd_per_mtok", opt(r.new_side.usd_per_mtok)},
                    {"cost_ratio", opt(r.cost_ratio)},
                    {"wall_clock_ratio", opt(r.wall_clock_ratio)},
                    {"old_hours_to_train", opt(r.old_side.hours_to_train)},
                    {"new_hours_to_train", opt(r.new_side.hours_to_train)},
                    {"note", r.note}});
    add_energy_json(rows.back(), r);
    for (const auto& [key, side] : {std::pair{"old_expert_tokens", &r.old_side}, {"new_expert_tokens", &r.new_side}}) {
      if (const auto& e = side->expert_tokens) rows.back()[key] = {{"min", e->min}, {"median", e->median}, {"max", e->max}};
    }
  }
  json stack = json::array();
  for (const auto& d : c.stack) {
    stack.push_back({{"key", d.key}, {"old", d.old_value}, {"new", d.new_value}, {"intended", d.intended}});
  }
  return {{"old", {{"path", c.old_run.path}, {"gpu", c.old_run.gpu}, {"catalog_id", c.old_gpu ? json(c.old_gpu->id) : json()}}},
          {"new", {{"path", c.new_run.path}, {"gpu", c.new_run.gpu}, {"catalog_id", c.new_gpu ? json(c.new_gpu->id) : json()}}},
          {"model", c.model ? json(c.model->id) : json()},
          {"hardware_ratios", {{"peak", opt(c.peak_ratio)}, {"mamf", opt(c.mamf_ratio)}, {"bandwidth", opt(c.bandwidth_ratio)}}},
          {"break_even_speedup", opt(c.break_even)},
          {"rows", rows},
          {"stack", stack},
          {"stack_mismatch", c.stack_mismatch},
          {"warnings", c.warnings}};
}

}  // namespace ub::report
