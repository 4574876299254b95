// Comparisons of attention, decomposition and MAMF logs; see other_comparisons.hpp.
#include "report/other_comparisons.hpp"

#include <fmt/format.h>

#include <set>

#include "core/spec_compare.hpp"
#include "report/format.hpp"

namespace ub::report {

namespace {

using nlohmann::json;

std::optional<double> div(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *b == 0) return std::nullopt;
  return *a / *b;
}

json opt(std::optional<double> v) { return v ? json(*v) : json(); }

// "Hardware ratios from the catalog" line, or why there is none.
std::string hardware_line(const std::string& old_gpu, const std::string& new_gpu, const Catalog& cat,
                          json& out) {
  const Accelerator* a = cat.try_find(old_gpu);
  const Accelerator* b = cat.try_find(new_gpu);
  if (!a || !b) {
    out = nullptr;
    return fmt::format("Hardware ratios: N/A ('{}' or '{}' is not in the catalog).", old_gpu, new_gpu);
  }
  const SpecComparison sc = compare_specs(*a, *b);
  out = {{"peak_bf16", opt(sc.ratios.peak.at(Dtype::bf16))}, {"peak_fp8", opt(sc.ratios.peak.at(Dtype::fp8))},
         {"mamf_bf16", opt(sc.ratios.mamf_bf16)}, {"mamf_fp8", opt(sc.ratios.mamf_fp8)},
         {"bandwidth", opt(sc.ratios.bandwidth)}};
  return fmt::format("Hardware ratios from the catalog ({} -> {}): peak bf16 {}, fp8 {}; published MAMF bf16 {}, "
                     "fp8 {}; HBM bandwidth {}.", a->id, b->id, ratio(sc.ratios.peak.at(Dtype::bf16)),
                     ratio(sc.ratios.peak.at(Dtype::fp8)), ratio(sc.ratios.mamf_bf16), ratio(sc.ratios.mamf_fp8),
                     ratio(sc.ratios.bandwidth));
}

}  // namespace

View compare_attention(const AttentionLog& o, const AttentionLog& n, const Catalog& cat) {
  View v;
  json hw;
  auto& b = v.doc.add(fmt::format("Attention: {} ({}) -> {} ({})", o.gpu, o.header.count("backend") ? o.header.at("backend") : "?",
                                  n.gpu, n.header.count("backend") ? n.header.at("backend") : "?"));
  b.notes.push_back(hardware_line(o.gpu, n.gpu, cat, hw));
  b.table.columns = {{"seqlen"}, {"old fwd TFLOPS"}, {"new fwd TFLOPS"}, {"fwd speedup"},
                     {"old fwd+bwd"}, {"new fwd+bwd"}, {"fwd+bwd speedup"}};
  std::set<int64_t> seqlens;
  for (const auto& p : o.points) seqlens.insert(p.seqlen);
  for (const auto& p : n.points) seqlens.insert(p.seqlen);
  json rows = json::array();
  for (int64_t s : seqlens) {
    auto find = [s](const AttentionLog& l) -> const AttentionPoint* {
      for (const auto& p : l.points) {
        if (p.seqlen == s) return &p;
      }
      return nullptr;
    };
    const AttentionPoint* a = find(o);
    const AttentionPoint* c = find(n);
    const std::optional<double> of = a ? std::optional<double>(a->fwd_tflops) : std::nullopt;
    const std::optional<double> nf = c ? std::optional<double>(c->fwd_tflops) : std::nullopt;
    const std::optional<double> ofb = a ? a->fwd_bwd_tflops : std::nullopt;
    const std::optional<double> nfb = c ? c->fwd_bwd_tflops : std::nullopt;
    b.table.add_row({fmt::format("{}", s), num(of), num(nf), ratio(div(nf, of)), num(ofb), num(nfb), ratio(div(nfb, ofb))});
    rows.push_back({{"seqlen", s}, {"old_fwd_tflops", opt(of)}, {"new_fwd_tflops", opt(nf)}, {"fwd_speedup", opt(div(nf, of))},
                    {"old_fwd_bwd_tflops", opt(ofb)}, {"new_fwd_bwd_tflops", opt(nfb)}, {"fwd_bwd_speedup", opt(div(nfb, ofb))}});
  }
  b.notes.push_back("One figure per point in these logs: the ratios carry no interval.");
  v.json = {{"kind", "attention"}, {"old_gpu", o.gpu}, {"new_gpu", n.gpu}, {"hardware_ratios", hw}, {"rows", rows}};
  return v;
}

View compare_decomposition(const DecompositionLog& o, const DecompositionLog& n, const Catalog& cat) {
  View v;
  json hw;
  auto& b = v.doc.add(fmt::format("Step decomposition: {} -> {}", o.gpu, n.gpu));
  b.notes.push_back(hardware_line(o.gpu, n.gpu, cat, hw));
  for (const auto* l : {&o, &n}) {
    if (l->summary.count("step")) b.notes.push_back(fmt::format("{}: wall step {} ms", l->path, l->summary.at("step")));
  }
  b.table.columns = {{"bucket", Align::left}, {"old ms"}, {"new ms"}, {"speedup"}, {"old TFLOPS"}, {"new TFLOPS"}};
  json rows = json::array();
  std::vector<std::string> names;
  for (const auto& x : o.buckets) names.push_back(x.name);
  for (const auto& x : n.buckets) {
    if (std::find(names.begin(), names.end(), x.name) == names.end()) names.push_back(x.name);
  }
  for (const std::string& name : names) {
    auto find = [&](const DecompositionLog& l) -> const DecompositionBucket* {
      for (const auto& x : l.buckets) {
        if (x.name == name) return &x;
      }
      return nullptr;
    };
    const DecompositionBucket* a = find(o);
    const DecompositionBucket* c = find(n);
    const std::optional<double> oms = a ? std::optional<double>(a->ms) : std::nullopt;
    const std::optional<double> nms = c ? std::optional<double>(c->ms) : std::nullopt;
    const std::optional<double> ot = a ? std::optional<double>(a->tflops) : std::nullopt;
    const std::optional<double> nt = c ? std::optional<double>(c->tflops) : std::nullopt;
    b.table.add_row({name, num(oms), num(nms), ratio(div(oms, nms)), num(ot), num(nt)});
    rows.push_back({{"bucket", name}, {"old_ms", opt(oms)}, {"new_ms", opt(nms)}, {"speedup", opt(div(oms, nms))},
                    {"old_tflops", opt(ot)}, {"new_tflops", opt(nt)}});
  }
  b.notes.push_back("Buckets split one measured wall-clock step (the seed's method): their speedups show which "
                    "part follows compute and which follows bandwidth. No interval: one figure each.");
  v.json = {{"kind", "decomposition"}, {"old_gpu", o.gpu}, {"new_gpu", n.gpu}, {"hardware_ratios", hw}, {"rows", rows}};
  return v;
}

View compare_mamf(const MamfLog& o, const MamfLog& n, const Catalog& cat) {
  View v;
  json hw;
  auto& b = v.doc.add(fmt::format("MAMF: {} ({}) -> {} ({})", o.gpu.empty() ? "?" : o.gpu, o.format,
                                  n.gpu.empty() ? "?" : n.gpu, n.format));
  b.notes.push_back(hardware_line(o.gpu, n.gpu, cat, hw));
  b.table.columns = {{"best", Align::left}, {"old TFLOPS"}, {"@ old MxNxK", Align::left}, {"new TFLOPS"},
                     {"@ new MxNxK", Align::left}, {"new/old"}};
  json rows = json::array();
  const std::pair<MamfOutcome::By, const char*> kinds[] = {
      {MamfOutcome::By::mean, "mean"}, {MamfOutcome::By::median, "median"}, {MamfOutcome::By::max, "max"}};
  auto best = [](const MamfLog& l, MamfOutcome::By by) -> std::optional<std::pair<double, std::string>> {
    if (auto s = l.outcome.best(by)) {
      return std::pair{by == MamfOutcome::By::mean ? s->mean_tflops : by == MamfOutcome::By::median ? s->median_tflops : s->max_tflops,
                       s->shape()};
    }
    const auto& f = by == MamfOutcome::By::mean ? l.footer_mean : by == MamfOutcome::By::median ? l.footer_median : l.footer_max;
    if (!f) return std::nullopt;
    return std::pair{by == MamfOutcome::By::mean ? f->mean_tflops : by == MamfOutcome::By::median ? f->median_tflops : f->max_tflops,
                     f->shape()};
  };
  for (const auto& [by, name] : kinds) {
    const auto a = best(o, by), c = best(n, by);
    const std::optional<double> av = a ? std::optional<double>(a->first) : std::nullopt;
    const std::optional<double> cv = c ? std::optional<double>(c->first) : std::nullopt;
    b.table.add_row({name, num(av), a ? a->second : "-", num(cv), c ? c->second : "-", ratio(div(cv, av))});
    rows.push_back({{"best", name}, {"old_tflops", opt(av)}, {"old_shape", a ? json(a->second) : json()},
                    {"new_tflops", opt(cv)}, {"new_shape", c ? json(c->second) : json()}, {"ratio", opt(div(cv, av))}});
  }
  b.notes.push_back(fmt::format("{} shapes (old), {} shapes (new). Shapes differ between GPUs: the ceilings are "
                                "compared, each at its own best shape.", o.outcome.shapes.size(), n.outcome.shapes.size()));
  v.json = {{"kind", "mamf"}, {"old_gpu", o.gpu}, {"new_gpu", n.gpu}, {"hardware_ratios", hw}, {"rows", rows}};
  return v;
}

}  // namespace ub::report
