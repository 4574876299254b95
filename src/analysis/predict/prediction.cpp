// The prediction model; see prediction.hpp and docs/predict.md.
#include "analysis/predict/prediction.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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

std::optional<double> attention_at(const MeasuredRates& m, int64_t seqlen) {
  for (const auto& [s, tflops] : m.attention_tflops) {
    if (s == seqlen) return tflops;
  }
  return std::nullopt;
}

std::optional<Ratio> matmul_ratio(const Accelerator& a, const Accelerator& b, const MeasuredRates& ma,
                                  const MeasuredRates& mb) {
  if (ma.mamf_tflops && mb.mamf_tflops) {
    return spread(*mb.mamf_tflops / *ma.mamf_tflops, kMeasuredSpread,
                  fmt::format("measured MAMF {:.1f} -> {:.1f} TFLOPS", *ma.mamf_tflops, *mb.mamf_tflops));
  }
  const auto published = [](const Accelerator& g, const MeasuredRates& m) -> std::optional<double> {
    if (m.mamf_tflops) return m.mamf_tflops;
    if (g.mamf_bf16 && g.mamf_bf16->tflops.known()) return g.mamf_bf16->tflops.value;
    return std::nullopt;
  };
  const auto x = published(a, ma), y = published(b, mb);
  if (!x || !y) return std::nullopt;
  return spread(*y / *x, kPublishedSpread, fmt::format("MAMF {:.1f} -> {:.1f} TFLOPS (published where not measured)", *x, *y));
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

std::optional<Ratio> memory_ratio(const Accelerator& a, const Accelerator& b, const MeasuredRates& ma,
                                  const MeasuredRates& mb) {
  return measured_or_catalog(ma.hbm_gbps, mb.hbm_gbps, a.bandwidth_tbps, b.bandwidth_tbps, kPublishedSpread,
                             "HBM copy", "GB/s", "HBM", "TB/s", 2);
}

std::optional<Ratio> attention_ratio(const Accelerator& a, const Accelerator& b, const MeasuredRates& ma,
                                     const MeasuredRates& mb, std::optional<int64_t> seqlen) {
  if (seqlen) {
    const auto x = attention_at(ma, *seqlen), y = attention_at(mb, *seqlen);
    if (x && y) {
      return spread(*y / *x, kMeasuredSpread,
                    fmt::format("measured attention at {} tokens {:.1f} -> {:.1f} TFLOPS", *seqlen, *x, *y));
    }
  }
  if (!a.peak(Dtype::bf16).known() || !b.peak(Dtype::bf16).known()) return std::nullopt;
  const double peak = b.peak(Dtype::bf16).value / a.peak(Dtype::bf16).value;
  return Ratio{peak * kAttentionEfficiency, peak * kAttentionEfficiencyLow, peak * kAttentionEfficiencyHigh,
               fmt::format("catalog bf16 peak ratio {:.2f}x at {:.0f}% ({:.0f}-{:.0f}%) of the old GPU's fraction of "
                           "peak (no attention measured on both at this length)",
                           peak, 100 * kAttentionEfficiency, 100 * kAttentionEfficiencyLow,
                           100 * kAttentionEfficiencyHigh)};
}

std::optional<Ratio> interconnect_ratio(const Accelerator& a, const Accelerator& b, const MeasuredRates& ma,
                                        const MeasuredRates& mb) {
  return measured_or_catalog(ma.busbw_gbps, mb.busbw_gbps, a.interconnect_gbps, b.interconnect_gbps,
                             kInterconnectSpread, "all_reduce busbw", "GB/s", "interconnect", "GB/s", 0);
}

}  // namespace

std::string_view to_string(WorkKind k) {
  switch (k) {
    case WorkKind::matmul: return "matmul";
    case WorkKind::attention: return "attention";
    case WorkKind::memory: return "memory-bound";
    case WorkKind::dense_mixed: return "matmul and memory-bound";
    case WorkKind::communication: return "communication";
    case WorkKind::unscaled: return "unscaled";
    case WorkKind::unknown: return "unknown";
  }
  return "unknown";
}

std::optional<Ratio> work_ratio(WorkKind kind, const Accelerator& a, const Accelerator& b, const MeasuredRates& ma,
                                const MeasuredRates& mb, std::optional<int64_t> seqlen) {
  switch (kind) {
    case WorkKind::matmul: return matmul_ratio(a, b, ma, mb);
    case WorkKind::attention: return attention_ratio(a, b, ma, mb, seqlen);
    case WorkKind::memory: return memory_ratio(a, b, ma, mb);
    case WorkKind::communication: return interconnect_ratio(a, b, ma, mb);
    case WorkKind::unscaled: return Ratio::one("unscaled: host, idle and copies over host links");
    case WorkKind::dense_mixed:
    case WorkKind::unknown: {
      // GEMMs and memory-bound work together: between the two ratios; the point at HBM's, as the
      // guide found for its "everything else" at one sequence per GPU.
      const auto mem = memory_ratio(a, b, ma, mb);
      if (!mem) return std::nullopt;
      const auto mm = matmul_ratio(a, b, ma, mb);
      if (!mm) return mem;
      return Ratio{mem->point, std::min(mem->low, mm->low), std::max(mem->high, mm->high),
                   fmt::format("between HBM ({}) and matmul ({}), at HBM's", mem->source, mm->source)};
    }
  }
  return std::nullopt;
}

Prediction predict_step(const StepInput& in, const Accelerator& a, const Accelerator& b, const MeasuredRates& ma,
                        const MeasuredRates& mb, const PredictOptions& options) {
  Prediction p;
  p.input = in;
  p.old_id = a.id, p.new_id = b.id, p.new_name = b.name;
  double step = 0, low = 0, high = 0;
  bool complete = true;
  for (const StepInput::Bucket& x : in.buckets) {
    PredictedBucket pb;
    pb.name = x.name, pb.kind = x.kind, pb.old_ms = x.ms;
    // The same GPU (a step carried to another length, checked against a measured curve): nothing to scale.
    pb.ratio = a.id == b.id ? std::optional<Ratio>(Ratio::one("the same GPU")) : work_ratio(x.kind, a, b, ma, mb, in.seqlen);
    if (pb.ratio) {
      pb.ms = x.ms / pb.ratio->point, pb.ms_low = x.ms / pb.ratio->high, pb.ms_high = x.ms / pb.ratio->low;
      step += *pb.ms, low += *pb.ms_low, high += *pb.ms_high;
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
  if (complete && step > 0) {
    p.step_ms = step, p.step_low_ms = low, p.step_high_ms = high;
    p.speedup = in.step_ms / step, p.speedup_low = in.step_ms / high, p.speedup_high = in.step_ms / low;
    if (in.step_tflop) {
      p.tflops = *in.step_tflop / (step / 1e3);
      p.mfu = b.fraction_of_peak(p.tflops, Dtype::bf16);
    }
    const auto most = std::max_element(p.buckets.begin(), p.buckets.end(),
                                       [](const auto& x, const auto& y) { return x.ms.value_or(0) < y.ms.value_or(0); });
    p.limiting = fmt::format("{} ({:.0f}% of the predicted step, {:.2f}x)", most->name, 100 * *most->ms / step,
                             most->ratio->point);
    if (options.price_from && options.price_to) {
      p.break_even = break_even_speedup(*options.price_from, *options.price_to);
      if (in.seqlen) {
        p.usd_per_mtoken_old = usd_per_million_tokens(*options.price_from, tokens_per_gpu_second(in.batch, *in.seqlen, in.step_ms));
        p.usd_per_mtoken_new = usd_per_million_tokens(*options.price_to, tokens_per_gpu_second(in.batch, *in.seqlen, step));
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
       {"notes", p.notes}};
}

}  // namespace ub
