// Presenting predictions; see prediction_view.hpp.
#include "report/prediction_view.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/text.hpp"
#include "report/format.hpp"

namespace ub::report {

namespace {

std::string interval(std::optional<double> low, std::optional<double> high, int precision = 1) {
  if (!low || !high) return "-";
  return fmt::format("{}-{}", num(low, precision), num(high, precision));
}

std::string ratio_interval(std::optional<double> low, std::optional<double> high) {
  if (!low || !high) return "-";
  return fmt::format("{:.2f}-{:.2f}x", *low, *high);
}

// The old GPU's step was not measured as shown: carried to another length or depth.
bool carried(const Prediction& p) { return p.input.carried_from || p.input.layers_carried_from; }

}  // namespace

Document prediction_document(const std::vector<Prediction>& ps) {
  Document doc;
  if (ps.empty()) return doc;
  const Prediction& first = ps.front();
  auto& s = doc.add(fmt::format("PREDICTED: {} -> {} (not measured on the {})", first.old_id, first.new_id, first.new_id));
  doc.data_tag = "PREDICTED";
  for (const Prediction& p : ps) {
    const Provenance& in = p.input.provenance;
    if (in.measured()) continue;
    doc.data_tag = fmt::format("PREDICTED FROM {}", in.tag());
    s.notes.push_back(fmt::format("PREDICTED FROM {}: {}: {}", in.tag(), printable(p.input.path), in.note));
    break;  // said once: the inputs of one prediction run share their files
  }
  s.table.columns = {{"seqlen"},         {"old GPU ms"}, {"PREDICTED ms"}, {"interval"},      {"speedup"},
                     {"interval"},       {"TFLOPS"},      {"MFU"},          {"limited by", Align::left},
                     {"$/Mtok old"},     {"$/Mtok new"},  {"per token", Align::left}, {"fits", Align::left}};
  for (const Prediction& p : ps) {
    s.table.add_row({p.input.seqlen ? std::to_string(*p.input.seqlen) : "-",
                     carried(p) ? num(p.input.step_ms, 2) + " *" : num(p.input.step_ms, 2), num(p.step_ms, 2),
                     interval(p.step_low_ms, p.step_high_ms, 2), ratio(p.speedup),
                     ratio_interval(p.speedup_low, p.speedup_high), num(p.tflops), percent(p.mfu), p.limiting.empty() ? "-" : p.limiting,
                     num(p.usd_per_mtoken_old, 3), num(p.usd_per_mtoken_new, 3),
                     p.cost_verdict.empty() ? "-" : p.cost_verdict,
                     !p.fits ? "-" : *p.fits ? fmt::format("yes ({:.1f} of {:.0f} GiB)", *p.input.peak_memory_gib, *p.new_capacity_gib)
                                             : fmt::format("NO ({:.1f} > {:.0f} GiB)", *p.input.peak_memory_gib, *p.new_capacity_gib)});
  }
  if (std::any_of(ps.begin(), ps.end(), carried)) {
    s.notes.push_back("* the old GPU's step there is itself carried from a measured length (--seqlen) or depth "
                      "(--to-layers) by the model's FLOPs: not measured.");
  }
  if (first.break_even) {
    s.notes.push_back(fmt::format("Break-even speedup (price ratio new / old): {:.2f}x: above it the {} costs less per "
                                  "token.", *first.break_even, first.new_id));
  }
  s.notes.push_back("Every figure in this table is PREDICTED from a measurement on the old GPU; the interval takes every "
                    "bucket at its ratio's low end, and every bucket at its high end (docs/predict.md).");
  for (const Prediction& p : ps) {
    auto& b = doc.add(fmt::format("PREDICTED buckets: {}{}{} ({})", p.input.path,
                                  p.input.seqlen ? fmt::format(", seqlen {}", *p.input.seqlen) : "",
                                  p.input.layers ? fmt::format(", {} layers", *p.input.layers) : "", p.input.from));
    b.table.columns = {{"bucket", Align::left}, {"work", Align::left}, {"old GPU ms"}, {"ratio"}, {"interval"},
                       {"PREDICTED ms"}, {"ratio from", Align::left}};
    for (const PredictedBucket& x : p.buckets) {
      b.table.add_row({x.name, std::string(to_string(x.kind)), num(x.old_ms, 2), x.ratio ? ratio(x.ratio->point) : "N/A",
                       x.ratio ? ratio_interval(x.ratio->low, x.ratio->high) : "-", num(x.ms, 2),
                       x.ratio ? x.ratio->source : "unknown figure"});
    }
    b.table.add_row({"step", "", num(p.input.step_ms, 2), ratio(p.speedup), ratio_interval(p.speedup_low, p.speedup_high),
                     num(p.step_ms, 2), ""});
    for (const std::string& n : p.notes) b.notes.push_back(n);
    if (p.next) {
      b.notes.push_back(fmt::format("Measure next: {} ({}): if its ratio came out in the middle of today's interval, the "
                                    "step's interval would narrow to {:.2f}-{:.2f}x (its point moving with that ratio).",
                                    p.next->what, p.next->command, p.next->speedup_low, p.next->speedup_high));
    }
  }
  return doc;
}

}  // namespace ub::report
