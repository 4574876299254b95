// The prediction model; see prediction.hpp and docs/predict.md.
#include "analysis/predict/prediction.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "facts/cost.hpp"
#include "records/fields.hpp"
#include "base/units.hpp"

namespace ub {

namespace {

// The uncertainty each kind of source carries, as a relative half-width of the ratio: two runs of
// our own benchmarks on one GPU model agree within a few percent (two H200s of one node differed by
// 5% in MAMF), a published figure was measured elsewhere on other software.
constexpr double kMeasuredSpread = 0.03, kPublishedSpread = 0.05, kInterconnectSpread = 0.10;
// Attention without measurements: the new GPU's peak, at 80-100% of the old GPU's fraction of
// peak (a new architecture's kernels start lower: the guide's FA4 on B200 reached 1.87x where the
// peak ratio is 2.28x, 82%); the point at 90%.
constexpr double kAttentionEfficiency = 0.9, kAttentionEfficiencyLow = 0.8, kAttentionEfficiencyHigh = 1.0;

Ratio spread(double point, double half_width, std::string source) {
  return {point, point * (1 - half_width), point * (1 + half_width), std::move(source)};
}

// Everything the ratios need of the two GPUs.
struct Sides {
  const Accelerator& a;
  const Accelerator& b;
  const MeasuredRates& ma;
  const MeasuredRates& mb;
  const Catalog* catalog;
};

// One kind of source on both sides where it can be: a MAMF measured on one GPU only is set aside
// for the published figures of both when both have one (our cuBLASLt search finds 3% more on an
// H200 than mamf-finder.py's torch.mm: a measured/published ratio would carry that difference).
std::optional<ComputeCeiling> ceiling_of(const Sides& s, bool old_side) {
  const bool both_published = s.a.published_mamf(Dtype::bf16) && s.b.published_mamf(Dtype::bf16);
  const bool both_measured = s.ma.mamf_tflops && s.mb.mamf_tflops;
  const auto measured = [&](const MeasuredRates& m) { return both_measured || !both_published ? m.mamf_tflops : std::nullopt; };
  return old_side ? compute_ceiling(s.a, Dtype::bf16, measured(s.ma), s.catalog, s.b, measured(s.mb))
                  : compute_ceiling(s.b, Dtype::bf16, measured(s.mb), s.catalog, s.a, measured(s.ma));
}

// The best-shape matmul ratio: both ceilings measured or published, the ratio with their spread;
// a ceiling from a peak and an efficiency, its own interval over the other's point.
std::optional<Ratio> compute_ratio(const Sides& s) {
  const auto x = ceiling_of(s, true), y = ceiling_of(s, false);
  if (!x || !y) return std::nullopt;
  const std::string source = fmt::format("{} -> {}", x->source, y->source);
  if ((x->measured || x->published) && (y->measured || y->published)) {
    return spread(y->tflops / x->tflops, x->measured && y->measured ? kMeasuredSpread : kPublishedSpread, source);
  }
  return Ratio{y->tflops / x->tflops, y->low / x->tflops, y->high / x->tflops, source};
}

// Measured on both GPUs where given (`what` and the unit name it), else the two catalog figures.
std::optional<Ratio> measured_or_catalog(std::optional<double> ma, std::optional<double> mb, const Figure& a,
                                         const Figure& b, double catalog_spread, const char* what, const char* unit,
                                         const char* catalog_what, const char* catalog_unit, int digits) {
  if (ma && mb) {
    return spread(*mb / *ma, kMeasuredSpread, fmt::format("measured {} {:.0f} -> {:.0f} {}", what, *ma, *mb, unit));
  }
  if (!a.known() || !b.known()) return std::nullopt;
  return spread(b.value / a.value, catalog_spread,
                fmt::format("catalog {} {:.{}f} -> {:.{}f} {}", catalog_what, a.value, digits, b.value, digits, catalog_unit));
}

std::optional<Ratio> memory_ratio(const Sides& s) {
  return measured_or_catalog(s.ma.hbm_gbps, s.mb.hbm_gbps, s.a.bandwidth_tbps, s.b.bandwidth_tbps, kPublishedSpread,
                             "HBM copy", "GB/s", "HBM", "TB/s", 2);
}

std::optional<Ratio> catalog_attention_ratio(const Sides& s) {
  if (!s.a.peak(Dtype::bf16).known() || !s.b.peak(Dtype::bf16).known()) return std::nullopt;
  const double peak = s.b.peak(Dtype::bf16).value / s.a.peak(Dtype::bf16).value;
  return Ratio{peak * kAttentionEfficiency, peak * kAttentionEfficiencyLow, peak * kAttentionEfficiencyHigh,
               fmt::format("catalog bf16 peak ratio {:.2f}x at {:.0f}% ({:.0f}-{:.0f}%) of the old GPU's fraction of "
                           "peak (no attention measured on both at this length)",
                           peak, 100 * kAttentionEfficiency, 100 * kAttentionEfficiencyLow,
                           100 * kAttentionEfficiencyHigh)};
}

// Attention measured on both at this length; else at the nearest length measured on both (by the
// ratio of lengths), its interval widened to the catalog's where it does not reach; else the catalog.
std::optional<Ratio> attention_ratio(const Sides& s, std::optional<int64_t> seqlen) {
  const std::optional<Ratio> catalog = catalog_attention_ratio(s);
  if (!seqlen) return catalog;
  if (const auto x = s.ma.attention_at(*seqlen), y = s.mb.attention_at(*seqlen); x && y) {
    return spread(*y / *x, kMeasuredSpread,
                  fmt::format("measured attention at {} tokens {:.1f} -> {:.1f} TFLOPS", *seqlen, *x, *y));
  }
  std::optional<int64_t> nearest;
  for (const auto& [len, tflops] : s.ma.attention_tflops) {
    if (!s.mb.attention_at(len)) continue;
    const auto distance = [&](int64_t l) { return std::abs(std::log(static_cast<double>(l) / static_cast<double>(*seqlen))); };
    if (!nearest || distance(len) < distance(*nearest)) nearest = len;
  }
  if (!nearest) return catalog;
  Ratio r = spread(*s.mb.attention_at(*nearest) / *s.ma.attention_at(*nearest), kMeasuredSpread,
                   fmt::format("measured attention at {} tokens (the nearest length measured on both)", *nearest));
  if (catalog) {
    r.low = std::min(r.low, catalog->low), r.high = std::max(r.high, catalog->high);
    r.source += fmt::format(", the interval out to the catalog's {:.2f}-{:.2f}x", catalog->low, catalog->high);
  }
  return r;
}

std::optional<Ratio> interconnect_ratio(const Sides& s) {
  return measured_or_catalog(s.ma.busbw_gbps, s.mb.busbw_gbps, s.a.interconnect_gbps, s.b.interconnect_gbps,
                             kInterconnectSpread, "all_reduce busbw", "GB/s", "interconnect", "GB/s", 0);
}

// Time beyond the ceiling of a bucket's work: kernels that ran below it (memory-bound, too small
// to fill the GPU) and gaps between them. Which of the two it is the model cannot tell: between
// 1.0x (gaps) and HBM's ratio, the point in the middle.
// (A GPU with less HBM bandwidth, a downgrade, puts HBM's ratio below 1.0x: the interval's ends
// are the two ratios in order, whichever side of 1.0x HBM's lies.)
Ratio beyond_ceiling_ratio(const Ratio& hbm) {
  return {(1 + hbm.point) / 2, std::min(1.0, hbm.point), std::max(1.0, hbm.point),
          fmt::format("time beyond the work's ceiling: between unscaled (1.00x) and HBM ({:.2f}x)", hbm.point)};
}

Ratio unexplained_ratio(const Ratio& hbm) {
  return {1, std::min(1.0, hbm.point), std::max(1.0, hbm.point),
          fmt::format("no kernel's work explains it (host, launch gaps, offload): not assumed to scale, up to HBM's "
                      "{:.2f}x", hbm.point)};
}

GemmGpu gemm_gpu(const Accelerator& g, const MeasuredRates& m, const ComputeCeiling& c) {
  GemmGpu out;
  out.compute_tflops = c.tflops;
  out.hbm_tbps = m.hbm_gbps ? *m.hbm_gbps / 1e3 : g.bandwidth_tbps.value;
  if (g.sm_count.known()) out.sms = static_cast<int64_t>(g.sm_count.value);
  out.timed = m.gemm_shapes;
  return out;
}

// The ratio of a step's GEMMs shape by shape, and the time they take at the old GPU's ceiling.
struct GemmScale {
  Ratio ratio;
  std::optional<double> old_ceiling_ms;  // the products at the old GPU's ceiling, where their work is known
};

std::optional<GemmScale> gemm_scale(const Sides& s, const StepInput& in, std::optional<double> bucket_tflop) {
  const auto compute = compute_ratio(s);
  const auto hbm = memory_ratio(s);
  if (!compute || !hbm) return std::nullopt;
  const auto old_ceiling = ceiling_of(s, true), new_ceiling = ceiling_of(s, false);
  if (in.gemms.empty() || !s.a.bandwidth_tbps.known() || !s.b.bandwidth_tbps.known()) {
    GemmScale g{{compute->point, std::min(hbm->low, compute->low), compute->high,
                 fmt::format("the best shape's ratio ({}), the step's shapes unknown; down to HBM's low end {:.2f}x",
                             compute->source, hbm->low)},
                std::nullopt};
    if (bucket_tflop) g.old_ceiling_ms = *bucket_tflop / old_ceiling->tflops * 1e3;
    return g;
  }
  const GemmMix mix = gemm_mix(in.gemms, gemm_gpu(s.a, s.ma, *old_ceiling), gemm_gpu(s.b, s.mb, *new_ceiling));
  const double point = mix.ratio();
  GemmScale g;
  g.old_ceiling_ms = mix.old_ms;
  if (mix.timed_both == mix.shapes) {
    g.ratio = spread(point, kMeasuredSpread, fmt::format("the step's {} products timed on both GPUs", mix.shapes));
    return g;
  }
  // The interval's ends as they are: the products' own ratio where it lies beyond HBM's low end or
  // compute's high end (products too small to fill either GPU gain less than either), else those.
  const std::string low = point < hbm->low ? fmt::format("the products' own {:.2f}x (below HBM's low end, {:.2f}x)", point, hbm->low)
                                           : fmt::format("HBM's low end {:.2f}x (bandwidth-bound)", hbm->low);
  const std::string high = point > compute->high
                               ? fmt::format("the products' own {:.2f}x (above compute's high end, {:.2f}x)", point, compute->high)
                               : fmt::format("compute's high end {:.2f}x", compute->high);
  g.ratio = {point, std::min({hbm->low, point}), std::max(compute->high, point),
             fmt::format("the step's {} products shape by shape ({} timed on the old GPU, {} on both{}), {}; from {} to {}",
                         mix.shapes, mix.timed_old, mix.timed_both,
                         mix.ridge_share > 0 ? fmt::format("; {:.0f}% of their time below the ridge point", 100 * mix.ridge_share) : "",
                         compute->source, low, high)};
  return g;
}

// The parts of one bucket and what each scales by; nullopt when a figure it needs is unknown.
std::optional<std::vector<BucketPart>> parts_of(const Sides& s, const StepInput& in, const StepInput::Bucket& x) {
  const auto hbm = memory_ratio(s);
  switch (x.kind) {
    case WorkKind::attention: {
      const auto r = attention_ratio(s, in.seqlen);
      if (!r) return std::nullopt;
      return std::vector<BucketPart>{{"attention kernels", x.ms, *r, Lever::attention}};
    }
    case WorkKind::memory:
      if (!hbm) return std::nullopt;
      return std::vector<BucketPart>{{"memory-bound kernels", x.ms, *hbm, Lever::hbm}};
    case WorkKind::communication: {
      const auto r = interconnect_ratio(s);
      if (!r) return std::nullopt;
      return std::vector<BucketPart>{{"exposed collectives", x.ms, *r, Lever::interconnect}};
    }
    case WorkKind::unexplained:
      if (!hbm) return std::nullopt;
      return std::vector<BucketPart>{{"time no kernel's work explains", x.ms, unexplained_ratio(*hbm), Lever::unexplained}};
    case WorkKind::unscaled:
      return std::vector<BucketPart>{{"copies over host links", x.ms, Ratio::one("unscaled: copies over host links"), Lever::none}};
    case WorkKind::matmul:
    case WorkKind::dense_mixed:
    case WorkKind::unknown: {
      if (!hbm) return std::nullopt;
      const auto g = gemm_scale(s, in, x.tflop);
      if (!g) return std::nullopt;
      // Compute nobody classified, or GEMMs and memory-bound work of unknown work: at HBM's ratio, as
      // the guide found its "everything else" at one sequence per GPU, up to the GEMMs'. (The step's
      // products are the gemm bucket's, or everything else's: not an unclassified bucket's.)
      if (x.kind == WorkKind::unknown || (!g->old_ceiling_ms && x.kind != WorkKind::matmul)) {
        return std::vector<BucketPart>{{"GEMMs and memory-bound work (work unknown)", x.ms,
                                        Ratio{hbm->point, std::min(hbm->low, g->ratio.low), std::max(hbm->high, g->ratio.high),
                                              fmt::format("its work unknown: at HBM's ratio ({}), up to the GEMMs' {:.2f}x",
                                                          hbm->source, g->ratio.high)},
                                        Lever::gemm}};
      }
      const double explained = g->old_ceiling_ms ? std::min(x.ms, *g->old_ceiling_ms) : x.ms;
      std::vector<BucketPart> parts = {{"GEMMs at the old GPU's ceiling", explained, g->ratio, Lever::gemm}};
      if (x.ms - explained > 0) {
        parts.push_back({"beyond the GEMMs' ceiling", x.ms - explained, beyond_ceiling_ratio(*hbm), Lever::beyond_ceiling});
      }
      return parts;
    }
  }
  return std::nullopt;
}

struct Totals {
  double point = 0, fast = 0, slow = 0;  // new ms: every part at its ratio's point, high end, low end
  void add(const BucketPart& p) { point += p.old_ms / p.ratio.point, fast += p.old_ms / p.ratio.high, slow += p.old_ms / p.ratio.low; }
};

// The ratio a bucket's parts make together, its source the parts' own.
Ratio combined(const std::vector<BucketPart>& parts, double old_ms) {
  Totals t;
  for (const BucketPart& p : parts) t.add(p);
  if (parts.size() == 1) return {old_ms / t.point, old_ms / t.slow, old_ms / t.fast, parts[0].ratio.source};
  // Each part with its time and ratio; the sources of the measured or catalog ratios after them
  // (the time beyond a ceiling is said once, in the notes).
  std::string source, sources;
  for (const BucketPart& p : parts) {
    source += fmt::format("{}{} {:.2f} ms at {:.2f}x ({:.2f}-{:.2f}x)", source.empty() ? "" : ", ", p.what, p.old_ms,
                          p.ratio.point, p.ratio.low, p.ratio.high);
    if (p.lever != Lever::beyond_ceiling) sources += "; " + p.ratio.source;
  }
  return {old_ms / t.point, old_ms / t.slow, old_ms / t.fast, source + sources};
}

// What each lever's measurement is, and the command that takes it on the new GPU.
std::pair<std::string, std::string> measurement_of(Lever l, const StepInput& in, const std::string& new_id) {
  const std::string len = in.seqlen ? std::to_string(*in.seqlen) : "S";
  switch (l) {
    case Lever::gemm:
      return {"the step's GEMMs shape by shape",
              in.gemms.empty() ? fmt::format("upgradebench mamf on the {} and the old GPU", new_id)
                               : fmt::format("upgradebench mamf --shapes-of {} --seqlen {}{} on the {} and the old GPU",
                                             in.model.value_or("MODEL"), len,
                                             in.layers ? fmt::format(" --layers {}", *in.layers) : "", new_id)};
    case Lever::attention:
      return {fmt::format("attention at {} tokens", len),
              fmt::format("upgradebench attention --seqlens {} on the {} and the old GPU", len, new_id)};
    case Lever::hbm: return {"HBM bandwidth", fmt::format("upgradebench bandwidth on the {} and the old GPU", new_id)};
    case Lever::interconnect:
      return {"the all_reduce bus bandwidth", fmt::format("upgradebench nccl on the {} and the old GPU", new_id)};
    default: return {"", ""};
  }
}

// Each lever not measured on both GPUs, its ratio taken at the middle of today's interval with a
// measurement's spread: the one that leaves the narrowest step interval.
std::optional<NextMeasurement> next_measurement(const std::vector<PredictedBucket>& buckets, const StepInput& in,
                                                const std::string& new_id) {
  std::optional<NextMeasurement> best;
  for (const Lever l : {Lever::gemm, Lever::attention, Lever::hbm, Lever::interconnect}) {
    bool present = false, open = false;
    Totals t;
    for (const PredictedBucket& b : buckets) {
      for (BucketPart p : b.parts) {
        if (p.lever == l) {
          present = true;
          if (p.ratio.high - p.ratio.low > 2 * kMeasuredSpread * p.ratio.point + 1e-9) open = true;
          p.ratio = spread((p.ratio.low + p.ratio.high) / 2, kMeasuredSpread, "");
        }
        t.add(p);
      }
    }
    if (!present || !open) continue;
    const auto [what, command] = measurement_of(l, in, new_id);
    NextMeasurement m{what, command, in.step_ms / t.slow, in.step_ms / t.fast};
    if (!best || m.speedup_high - m.speedup_low < best->speedup_high - best->speedup_low) best = m;
  }
  return best;
}

}  // namespace

std::optional<double> MeasuredRates::attention_at(int64_t seqlen) const {
  for (const auto& [s, tflops] : attention_tflops) {
    if (s == seqlen) return tflops;
  }
  return std::nullopt;
}

std::string_view to_string(WorkKind k) {
  switch (k) {
    case WorkKind::matmul: return "matmul";
    case WorkKind::attention: return "attention";
    case WorkKind::memory: return "memory-bound";
    case WorkKind::dense_mixed: return "matmul and memory-bound";
    case WorkKind::communication: return "communication";
    case WorkKind::unexplained: return "unexplained";
    case WorkKind::unscaled: return "unscaled";
    case WorkKind::unknown: return "unknown";
  }
  return "unknown";
}

Prediction predict_step(const StepInput& in, const Accelerator& a, const Accelerator& b, const MeasuredRates& ma,
                        const MeasuredRates& mb, const PredictOptions& options) {
  Prediction p;
  p.input = in;
  p.old_id = a.id, p.new_id = b.id, p.new_name = b.name;
  const Sides sides{a, b, ma, mb, options.catalog};
  Totals total;
  bool complete = true, beyond = false, unexplained = false;
  for (const StepInput::Bucket& x : in.buckets) {
    PredictedBucket pb;
    pb.name = x.name, pb.kind = x.kind, pb.old_ms = x.ms;
    // The same GPU (a step carried to another length, checked against a measured curve): nothing to scale.
    const auto parts = a.id == b.id ? std::optional<std::vector<BucketPart>>({{"the same GPU", x.ms, Ratio::one("the same GPU"), Lever::none}})
                                    : parts_of(sides, in, x);
    if (parts && x.ms > 0) {
      pb.parts = *parts;
      pb.ratio = combined(pb.parts, x.ms);
      Totals t;
      for (const BucketPart& part : pb.parts) {
        t.add(part), total.add(part);
        beyond = beyond || (part.lever == Lever::beyond_ceiling && part.old_ms > 0.05 * in.step_ms);
        unexplained = unexplained || (part.lever == Lever::unexplained && part.old_ms > 0.05 * in.step_ms);
      }
      pb.ms = t.point, pb.ms_low = t.fast, pb.ms_high = t.slow;
    } else if (parts) {  // an empty bucket: its ratio shown, nothing to add
      pb.parts = *parts;
      pb.ratio = pb.parts.front().ratio;
      pb.ms = pb.ms_low = pb.ms_high = 0.0;
    } else if (x.ms > 0) {
      complete = false;
      p.notes.push_back(fmt::format("{}: N/A, a figure it needs ({} work) is unknown for one of the GPUs", x.name,
                                    to_string(x.kind)));
    }
    if (x.kind == WorkKind::unknown && x.ms > 0) {
      p.notes.push_back(fmt::format("{}: compute of unknown kind ({:.2f} ms), scaled as GEMMs and memory-bound work "
                                    "together", x.name, x.ms));
    }
    p.buckets.push_back(std::move(pb));
  }
  if (unexplained) {
    p.notes.push_back("Part of the old step is time no kernel's work explains (host, offload, launch gaps): it is not "
                      "assumed to scale (low end 1.0x); a decomposition of the step on the new GPU would narrow it.");
  }
  if (beyond) {
    p.notes.push_back("Part of a bucket ran beyond its work's ceiling on the old GPU (kernels below it, or gaps): scaled "
                      "between 1.0x and HBM's ratio; a decomposition by kernel (decompose) would narrow it.");
  }
  if (complete && total.point > 0) {
    p.step_ms = total.point, p.step_low_ms = total.fast, p.step_high_ms = total.slow;
    p.speedup = in.step_ms / total.point, p.speedup_low = in.step_ms / total.slow, p.speedup_high = in.step_ms / total.fast;
    if (in.step_tflop) {
      p.tflops = *in.step_tflop / (total.point / 1e3);
      p.mfu = b.fraction_of_peak(p.tflops, Dtype::bf16);
    }
    const auto most = std::max_element(p.buckets.begin(), p.buckets.end(),
                                       [](const auto& x, const auto& y) { return x.ms.value_or(0) < y.ms.value_or(0); });
    p.limiting = fmt::format("{} ({:.0f}% of the predicted step, {:.2f}x)", most->name, 100 * *most->ms / total.point,
                             most->ratio->point);
    if (a.id != b.id) p.next = next_measurement(p.buckets, in, b.id);
    if (options.price_from && options.price_to) {
      p.break_even = break_even_speedup(*options.price_from, *options.price_to);
      if (in.seqlen) {
        p.usd_per_mtoken_old = usd_per_million_tokens(*options.price_from, tokens_per_gpu_second(in.batch, *in.seqlen, in.step_ms));
        p.usd_per_mtoken_new = usd_per_million_tokens(*options.price_to, tokens_per_gpu_second(in.batch, *in.seqlen, total.point));
      }
      p.cost_verdict = *p.speedup_low > *p.break_even    ? "CHEAPER per token"
                       : *p.speedup_high < *p.break_even ? "COSTLIER per token"
                                                         : "AMBIGUOUS (the break-even is inside the interval)";
    }
  }
  if (const auto cap = b.capacity_gib()) {
    p.new_capacity_gib = *cap;
    if (in.peak_memory_gib) p.fits = *in.peak_memory_gib <= *cap;
  }
  return p;
}

void to_json(nlohmann::json& j, const Prediction& p) {
  nlohmann::json buckets = nlohmann::json::array();
  for (const PredictedBucket& x : p.buckets) {
    nlohmann::json r = {{"name", x.name}, {"kind", to_string(x.kind)}, {"old_ms", x.old_ms}, {"ms", or_null(x.ms)},
                        {"ms_low", or_null(x.ms_low)}, {"ms_high", or_null(x.ms_high)}};
    if (x.ratio) {
      r["ratio"] = {{"point", x.ratio->point}, {"low", x.ratio->low}, {"high", x.ratio->high}, {"source", x.ratio->source}};
    } else {
      r["ratio"] = nullptr;
    }
    nlohmann::json parts = nlohmann::json::array();
    for (const BucketPart& part : x.parts) {
      parts.push_back({{"what", part.what}, {"old_ms", part.old_ms}, {"point", part.ratio.point},
                       {"low", part.ratio.low}, {"high", part.ratio.high}, {"source", part.ratio.source}});
    }
    r["parts"] = parts;
    buckets.push_back(r);
  }
  j = {{"type", "prediction"},
       {"predicted", true},
       {"input", p.input.path},
       {"input_data", p.input.provenance.tag()},
       {"from", p.input.from},
       {"old_gpu", p.old_id},
       {"new_gpu", p.new_id},
       {"seqlen", or_null(p.input.seqlen)},
       {"batch", p.input.batch},
       {"old_step_ms", p.input.step_ms},
       {"carried_from", or_null(p.input.carried_from)},
       {"layers", or_null(p.input.layers)},
       {"model", or_null(p.input.model)},
       {"format", p.input.format},
       {"workload", p.input.workload},
       {"layers_carried_from", or_null(p.input.layers_carried_from)},
       {"step_ms", or_null(p.step_ms)},
       {"step_ms_interval", p.step_ms ? nlohmann::json{*p.step_low_ms, *p.step_high_ms} : nlohmann::json()},
       {"speedup", or_null(p.speedup)},
       {"speedup_interval", p.speedup ? nlohmann::json{*p.speedup_low, *p.speedup_high} : nlohmann::json()},
       {"tflops", or_null(p.tflops)},
       {"mfu", or_null(p.mfu)},
       {"limiting", p.limiting},
       {"break_even", or_null(p.break_even)},
       {"usd_per_mtoken_old", or_null(p.usd_per_mtoken_old)},
       {"usd_per_mtoken_new", or_null(p.usd_per_mtoken_new)},
       {"cost_verdict", p.cost_verdict},
       {"old_peak_memory_gib", or_null(p.input.peak_memory_gib)},
       {"new_capacity_gib", or_null(p.new_capacity_gib)},
       {"fits", or_null(p.fits)},
       {"buckets", buckets},
       {"next_measurement", p.next ? nlohmann::json{{"what", p.next->what}, {"command", p.next->command},
                                                    {"speedup_interval", {p.next->speedup_low, p.next->speedup_high}}}
                                   : nlohmann::json()},
       {"notes", p.notes}};
}

}  // namespace ub
