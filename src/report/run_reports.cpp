// Report contents; see run_reports.hpp.
#include "report/run_reports.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "analysis/decision_summary.hpp"
#include "analysis/memory_headroom.hpp"
#include "base/units.hpp"
#include "facts/cost.hpp"
#include "facts/flops.hpp"
#include "facts/memfit.hpp"
#include "records/provenance.hpp"
#include "report/comparison_view.hpp"
#include "report/format.hpp"

namespace ub::report {

namespace {

std::string banner_of(const std::vector<const RunLog*>& runs) {
  std::vector<std::string> parts;
  for (const RunLog* r : runs) {
    if (!r->provenance.empty()) parts.push_back(not_measured_line(r->path, r->provenance));
  }
  if (parts.empty()) return "";
  return fmt::format("{}", fmt::join(parts, "; "));
}

Document stack_document(const RunLog& o, const RunLog& n) {
  Document d;
  auto& b = d.add("Software stack and configuration");
  b.table.columns = {{"component", Align::left}, {"old", Align::left}, {"new", Align::left}, {"", Align::left}};
  std::map<std::string, std::pair<std::string, std::string>> rows;
  for (const auto& [k, v] : o.software) rows[k].first = v;
  for (const auto& [k, v] : n.software) rows[k].second = v;
  for (const auto& [k, v] : o.config) rows["config " + k].first = v;
  for (const auto& [k, v] : n.config) rows["config " + k].second = v;
  for (const auto& [k, v] : rows) {
    b.table.add_row({k, v.first.empty() ? "-" : v.first, v.second.empty() ? "-" : v.second,
                     v.first == v.second ? "" : "differs"});
  }
  return d;
}

void append(Document& to, const Document& from) {
  for (const Block& b : from.blocks) to.blocks.push_back(b);
}

// The usable capacity by the catalog's rule (src/facts/catalog.hpp), and what it rests on.
std::pair<std::optional<double>, std::string> capacity_of(const Accelerator& a) {
  if (const auto cap = a.capacity_gib()) return {cap, a.device_total_gib.known() ? "usable (driver total)" : "usable (datasheet)"};
  return {std::nullopt, ""};
}

// Each run's memory line and the longest sequence it gives on each GPU of the comparison.
void two_run_memory_fit(const Comparison& c, Document& body) {
  auto& f = body.add("Memory fit and the longest sequence per GPU");
  f.table.columns = {{"run", Align::left}, {"peak GiB = a + b x tokens", Align::left}, {"R^2"}};
  std::vector<const Accelerator*> gpus;
  for (const Accelerator* g : {c.old_gpu, c.new_gpu}) {
    if (g && capacity_of(*g).first) {
      gpus.push_back(g);
      f.table.columns.push_back({fmt::format("longest on {} ({:.0f} GiB)", g->id, *capacity_of(*g).first)});
    }
  }
  for (const auto& [run, who] : {std::pair{&c.old_run, "old"}, std::pair{&c.new_run, "new"}}) {
    const auto pts = memory_points(*run);
    std::set<double> distinct;
    for (const auto& p : pts) distinct.insert(p.first);
    if (distinct.size() < 2) {
      f.notes.push_back(fmt::format("{} ({}): fewer than two measured lengths with memory: no fit.", run->path, who));
      continue;
    }
    const MemoryFit fit = fit_memory(pts, run->path);
    std::vector<std::string> row = {fmt::format("{} ({})", run->gpu, who),
                                    fmt::format("{:.2f} + {:.6f} x tokens", fit.intercept_gib, fit.slope_gib_per_token),
                                    fmt::format("{:.4f}", fit.r2)};
    const Accelerator* own = run == &c.old_run ? c.old_gpu : c.new_gpu;
    for (const Accelerator* g : gpus) {
      row.push_back(longest_sequence(*run, capacity_of(*g).first, std::nullopt, g == own).cell("no limit"));
    }
    f.table.add_row(row);
  }
  f.notes.push_back("Each run's line extended to each GPU's capacity: memory per token differs between stacks, so "
                    "the new run's line on the new GPU is the one to plan with.");
}

}  // namespace

// The charts of two runs, on one x range (the measured lengths, and the longest that fits where
// it lies beyond them): TFLOPS, the speedup with its interval band, the hardware ratios, the
// break-even and the crossover; $/Mtoken per GPU when priced; the attention share; memory
// against tokens on a linear axis with each run's fitted line extended to the larger capacity,
// its out-of-memory lengths marked at its GPU's capacity, and the longest sequence each GPU holds.
std::vector<Chart> comparison_charts(const Comparison& c, const DecisionSummary& summary) {
  Chart tflops{"tflops", "TFLOPS per GPU", "sequence length", "TFLOPS per GPU", true, {}, {}, {}};
  Chart speed{"speedup", "Speedup new/old (band: 95% interval)", "sequence length", "speedup (x)", true, {}, {}, {}};
  Chart cost{"cost", "Cost per million tokens", "sequence length", "USD per million tokens", true, {}, {}, {}};
  Chart attn{"attention_share", "Attention share of model FLOPs", "sequence length", "% of FLOPs", true, {}, {}, {}};
  Chart mem{"memory", "Peak memory against tokens", "tokens (sequence length x batch)", "GiB", false, {}, {}, {}};
  const std::string old_name = c.old_run.gpu + " (old)", new_name = c.new_run.gpu + " (new)";
  Series so{old_name, {}}, sn{new_name, {}}, ss{"speedup", {}}, sa{"attention", {}};
  Series co{old_name, {}}, cn{new_name, {}}, mo{old_name, {}}, mn{new_name, {}};
  Series oom_old{old_name + " out of memory", {}, {}, SeriesStyle::markers};
  Series oom_new{new_name + " out of memory", {}, {}, SeriesStyle::markers};
  const auto cap_old = c.old_gpu ? capacity_of(*c.old_gpu).first : std::nullopt;
  const auto cap_new = c.new_gpu ? capacity_of(*c.new_gpu).first : std::nullopt;
  double x_lo = 0, x_hi = 0;
  for (const CompareRow& row : c.rows) {
    const double x = static_cast<double>(row.seqlen);
    x_lo = x_lo == 0 ? x : std::min(x_lo, x);
    x_hi = std::max(x_hi, x);
    if (row.old_side.tflops) so.points.emplace_back(x, *row.old_side.tflops);
    if (row.new_side.tflops) sn.points.emplace_back(x, *row.new_side.tflops);
    if (row.speedup) {
      ss.points.emplace_back(x, row.speedup->ratio);
      ss.band.push_back({x, row.speedup->low, row.speedup->high});
    }
    if (row.old_side.usd_per_mtok) co.points.emplace_back(x, *row.old_side.usd_per_mtok);
    if (row.new_side.usd_per_mtok) cn.points.emplace_back(x, *row.new_side.usd_per_mtok);
    if (row.attention_share) sa.points.emplace_back(x, *row.attention_share * 100);
    if (row.old_side.peak_gib) mo.points.emplace_back(x * static_cast<double>(c.old_run.batch), *row.old_side.peak_gib);
    if (row.new_side.peak_gib) mn.points.emplace_back(x * static_cast<double>(c.new_run.batch), *row.new_side.peak_gib);
    if (row.old_side.status == "oom" && cap_old) oom_old.points.emplace_back(x * static_cast<double>(c.old_run.batch), *cap_old);
    if (row.new_side.status == "oom" && cap_new) oom_new.points.emplace_back(x * static_cast<double>(c.new_run.batch), *cap_new);
  }
  tflops.series = {so, sn};
  speed.series = {ss};
  if (c.peak_ratio) speed.lines.push_back({fmt::format("peak {} ratio {:.2f}x", c.old_run.dtype, *c.peak_ratio), *c.peak_ratio});
  if (c.mamf_ratio) speed.lines.push_back({fmt::format("published MAMF ratio {:.2f}x", *c.mamf_ratio), *c.mamf_ratio});
  if (c.bandwidth_ratio) speed.lines.push_back({fmt::format("HBM bandwidth ratio {:.2f}x", *c.bandwidth_ratio), *c.bandwidth_ratio});
  if (c.break_even) speed.lines.push_back({fmt::format("break-even {:.2f}x", *c.break_even), *c.break_even});
  if (summary.crossover_seqlen) {
    speed.lines.push_back({fmt::format("crossover ~{:.0f} tokens (interpolated)", *summary.crossover_seqlen),
                           *summary.crossover_seqlen, true});
  }
  cost.series = {co, cn};
  attn.series = {sa};
  mem.series = {mo, mn};
  const double cap_top = std::max(cap_old.value_or(0), cap_new.value_or(0));
  for (const auto& [run, series, gpu, cap] : {std::tuple{&c.old_run, &mo, c.old_gpu, cap_old},
                                             std::tuple{&c.new_run, &mn, c.new_gpu, cap_new}}) {
    const auto pts = memory_points(*run);
    std::set<double> distinct;
    for (const auto& p : pts) distinct.insert(p.first);
    if (distinct.size() < 2 || cap_top <= 0) continue;
    const MemoryFit fit = fit_memory(pts, run->path);
    if (fit.slope_gib_per_token <= 0) continue;
    const double reach = (cap_top - fit.intercept_gib) / fit.slope_gib_per_token;  // tokens at the larger capacity
    if (reach <= *distinct.begin()) continue;
    mem.series.push_back({series->name + " fit",
                          {{*distinct.begin(), fit.intercept_gib + fit.slope_gib_per_token * *distinct.begin()}, {reach, cap_top}},
                          {},
                          SeriesStyle::line});
    if (gpu && cap) {
      const LongestSequence longest = longest_sequence(*run, cap, std::nullopt, true);
      if (longest.tokens) {
        mem.lines.push_back({fmt::format("longest on {}: {} tokens{}", gpu->id, *longest.tokens,
                                         longest.capped         ? " (below a measured out of memory)"
                                         : longest.ran_past_fit ? " (ran; the fit says fewer)"
                                                                : ""),
                             static_cast<double>(*longest.tokens * run->batch), true});
        x_hi = std::max(x_hi, static_cast<double>(*longest.tokens));
      }
    }
  }
  if (!oom_old.points.empty()) mem.series.push_back(oom_old);
  if (!oom_new.points.empty()) mem.series.push_back(oom_new);
  for (const auto& [gpu, cap, who] : {std::tuple{c.old_gpu, cap_old, "old"}, std::tuple{c.new_gpu, cap_new, "new"}}) {
    if (gpu && cap) mem.lines.push_back({fmt::format("{} usable {:.0f} GiB ({})", gpu->id, *cap, who), *cap});
  }
  std::vector<Chart> charts = {tflops, speed};
  if (!co.points.empty() || !cn.points.empty()) charts.push_back(cost);
  charts.push_back(attn);
  charts.push_back(mem);
  for (Chart& ch : charts) {  // one x range for all (memory: tokens, the same span at batch 1)
    if (x_lo <= 0 || x_hi <= x_lo) continue;
    const double batch = ch.id == "memory" ? static_cast<double>(std::max(c.old_run.batch, c.new_run.batch)) : 1.0;
    ch.x_min = ch.log2_x ? x_lo / 1.15 : 0.0;
    ch.x_max = (ch.log2_x ? x_hi * 1.15 : x_hi * 1.05) * batch;
  }
  return charts;
}

ReportContent comparison_report(const Comparison& c, const std::vector<std::string>& reasons) {
  ReportContent r;
  r.title = fmt::format("{} vs {}: training step by sequence length", c.old_run.gpu, c.new_run.gpu);
  r.banner = banner_of({&c.old_run, &c.new_run});
  if (!r.banner.empty()) r.chart_tag = "EXAMPLE DATA";
  const DecisionSummary summary = decision_summary(c);
  auto& glance = r.body.add("Decision at a glance");
  glance.notes = summary.lines;
  glance.bulleted = true;
  r.lead_block = true;
  // What --force compared across, then a software difference, lead the page.
  const std::string forced = forced_headline(c.warnings);
  r.alert = forced.empty() ? summary.stack_alert
                           : summary.stack_alert.empty() ? forced : forced + " " + summary.stack_alert;
  append(r.body, comparison_document(c));
  two_run_memory_fit(c, r.body);
  append(r.body, stack_document(c.old_run, c.new_run));
  auto& dec = r.body.add("Decision");
  dec.notes = measured_conclusions(c);
  for (const std::string& s : reasons) dec.notes.push_back(s);
  dec.bulleted = true;

  r.charts = comparison_charts(c, summary);
  return r;
}

namespace {

// What the single-run page leads with, as the two-run page leads with its decision: what ran,
// where, on which stack, when, the best figures and the longest sequence.
std::vector<std::string> glance_lines(const RunLog& run, const Accelerator* gpu, const std::optional<ModelShape>& model) {
  std::vector<std::string> out;
  const std::string what = fmt::format("{}{}, batch {}, {}", model ? model->id : run.model.value_or("model unknown"),
                                       run.layers ? fmt::format(", {} layers", *run.layers) : "", run.batch, run.dtype);
  const std::string by = run.command.empty() ? run.format : fmt::format("upgradebench {}", run.command);
  out.push_back(fmt::format("What ran: the training step of {}, by {}, at {} lengths.", what, by, run.points.size()));
  out.push_back(fmt::format("Where and when: {}{}{}, {}.", run.gpu.empty() ? "GPU unknown" : run.gpu,
                            gpu ? fmt::format(" ({})", gpu->id) : " (not in the catalog)",
                            run.host.empty() ? "" : " on " + run.host, run.date.empty() ? "date not in the log" : run.date));
  std::vector<std::string> stack;
  for (const char* k : {"upgradebench", "torch", "cuda", "cuda_runtime", "cublaslt", "cudnn", "nccl", "driver", "flash-attn-3"}) {
    const auto it = run.software.find(k);
    if (it == run.software.end()) continue;
    // Our records name the tool with its name ("upgradebench 0.1.0").
    const std::string v = it->second.rfind(std::string(k) + " ", 0) == 0 ? it->second.substr(std::string(k).size() + 1) : it->second;
    stack.push_back(fmt::format("{} {}", k, v));
  }
  out.push_back(stack.empty() ? std::string("Stack: not in the log.") : fmt::format("Stack: {}.", fmt::join(stack, ", ")));
  std::optional<double> best;
  int64_t best_at = 0, longest_ran = 0;
  std::optional<double> best_mfu;
  std::optional<int64_t> first_oom;
  std::vector<double> per_joule;
  for (const RunPoint& p : run.points) {
    if (p.status == PointStatus::oom) {
      if (!first_oom) first_oom = p.seqlen;
      continue;
    }
    const PointStats st = point_stats(run, p);
    const PointThroughput tp = point_throughput(run, p, st, model, gpu);
    if (tp.tflops && (!best || *tp.tflops > *best)) best = tp.tflops, best_at = p.seqlen, best_mfu = tp.mfu;
    longest_ran = std::max(longest_ran, p.seqlen);
    if (const auto j = p.steps.joules_per_step()) per_joule.push_back(tokens_per_joule(run.batch, p.seqlen, *j));
  }
  if (best) {
    out.push_back(fmt::format("Best: {:.1f} TFLOPS per GPU at {} tokens{}.", *best, best_at,
                              best_mfu ? fmt::format(" (MFU {:.1f}%)", *best_mfu * 100) : ""));
  }
  const LongestSequence fit = longest_sequence(run, gpu ? gpu->capacity_gib() : std::nullopt, std::nullopt, true);
  out.push_back(fmt::format("Longest sequence: {} tokens ran{}{}.", longest_ran,
                            first_oom ? fmt::format(", {} ran out of memory", *first_oom) : "",
                            fit.tokens ? fmt::format("; on one {} {} {} ({}){}", gpu ? gpu->id : run.gpu,
                                                     fit.ran_past_fit ? "it holds" : "the fit holds", *fit.tokens,
                                                     fit.how, fit.guess() ? ": " + *fit.guess() : "")
                            : !gpu     ? fmt::format("; the catalog does not know the {}: no capacity to read the memory fit "
                                                     "at (memfit --capacity-gib)", run.gpu.empty() ? "GPU" : run.gpu)
                                       : ""));
  if (!per_joule.empty()) {
    const auto [lo, hi] = std::minmax_element(per_joule.begin(), per_joule.end());
    out.push_back(fmt::format("Energy: {:.1f}-{:.1f} tokens per joule per GPU ({}).", *lo, *hi,
                              run.points.front().steps.energy_source().empty() ? "sampled power" : run.points.front().steps.energy_source()));
  }
  return out;
}

}  // namespace

ReportContent single_run_report(const RunLog& run, const Catalog& catalog, const std::optional<ModelShape>& model) {
  ReportContent r;
  r.title = fmt::format("{}: {}{} training step by sequence length", run.gpu, model ? model->id : "model unknown",
                        run.layers ? fmt::format(" ({} layers)", *run.layers) : "");
  r.banner = banner_of({&run});
  if (!r.banner.empty()) r.chart_tag = "EXAMPLE DATA";
  const Accelerator* gpu = catalog.try_find(run.gpu);
  auto& glance = r.body.add("At a glance");
  glance.notes = glance_lines(run, gpu, model);
  glance.bulleted = true;
  r.lead_block = true;
  auto& t = r.body.add("Per sequence length");
  t.notes.push_back("Records: " + run.path);
  t.table.columns = {{"seqlen"}, {"step ms"}, {"TFLOPS"}, {"MFU"}, {"attn share"}, {"peak GiB"}, {"status", Align::left}};
  Series tf{run.gpu, {}}, mfu{run.gpu, {}}, attn{"attention", {}}, mem{"measured", {}};
  std::vector<std::pair<double, double>> mem_points;
  for (const RunPoint& p : run.points) {
    const double x = static_cast<double>(p.seqlen);
    std::optional<double> share;
    if (model) {
      FlopOptions fo;
      fo.batch = run.batch;
      share = step_flops(*model, p.seqlen, fo).attention_share();
      attn.points.emplace_back(x, *share * 100);
    }
    if (p.status == PointStatus::oom) {
      t.table.add_row({fmt::format("{}", p.seqlen), "-", "-", "-", percent(share), "-", "out of memory"});
      continue;
    }
    const PointStats st = point_stats(run, p);
    const auto [tflops, m] = point_throughput(run, p, st, model, gpu);
    if (tflops) tf.points.emplace_back(x, *tflops);
    if (m) mfu.points.emplace_back(x, *m * 100);
    if (st.peak_mem_gib) {
      mem.points.emplace_back(x, *st.peak_mem_gib);
      mem_points.emplace_back(static_cast<double>(p.seqlen) * static_cast<double>(run.batch), *st.peak_mem_gib);
    }
    t.table.add_row({fmt::format("{}", p.seqlen), num(st.time_ms.median), num(tflops), percent(m), percent(share),
                     num(st.peak_mem_gib), "ok"});
  }
  Chart c_tf{"tflops", "TFLOPS per GPU", "sequence length", "TFLOPS", true, {tf}, {}, {}};
  Chart c_mfu{"mfu", "MFU", "sequence length", "% of peak", true, {mfu}, {}, {}};
  Chart c_attn{"attention_share", "Attention share of model FLOPs", "sequence length", "% of FLOPs", true, {attn}, {}, {}};
  Chart c_mem{"memory", "Peak memory", "sequence length", "GiB", true, {mem}, {}, {}};
  if (mem_points.size() >= 2) {
    const MemoryFit fit = fit_memory(mem_points, run.path);
    auto& f = r.body.add("Memory fit and the longest sequence per GPU");
    f.notes.push_back(fmt::format("peak GiB = {:.2f} + {:.6f} x tokens (R^2 {:.4f}, {} points)", fit.intercept_gib,
                                  fit.slope_gib_per_token, fit.r2, fit.points));
    f.table.columns = {{"GPU", Align::left}, {"capacity GiB"}, {"basis", Align::left}, {"longest sequence"}};
    for (const Accelerator& a : catalog.all()) {
      const auto [cap, basis] = capacity_of(a);
      if (!cap) continue;
      f.table.add_row({a.id, num(*cap), basis, longest_sequence(run, cap, std::nullopt, &a == gpu).cell("no limit")});
    }
    Series fitted{"fit", {}};
    for (const auto& [x, y] : mem.points) fitted.points.emplace_back(x, fit.intercept_gib + fit.slope_gib_per_token * x * static_cast<double>(run.batch));
    c_mem.series.push_back(fitted);
  }
  if (gpu && gpu->capacity_gib()) c_mem.lines.push_back({fmt::format("{} capacity", gpu->id), *gpu->capacity_gib()});
  r.charts = {c_tf, c_mfu, c_attn, c_mem};
  if (!run.warnings.empty()) {
    auto& w = r.body.add("Warnings");
    w.notes = run.warnings;
    w.bulleted = true;
  }
  return r;
}

}  // namespace ub::report
