// The decision; see decide.hpp. Verdicts:
//   upgrade-for-capability    a needed dtype runs on the new GPU only
//   new-gpu-lacks-capability  a needed dtype does not run on the new GPU either / at all
//   costlier-per-token        even the best spec ceiling is below the break-even speedup
//   predicted-costlier-per-token  every PREDICTED speedup interval is below the break-even
//   predicted-cheaper-per-token   every PREDICTED speedup interval is above it (measure to confirm)
//   measure                   specs cannot decide; measure both (`compare`)
#include "analysis/decide.hpp"
#include "base/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "base/error.hpp"

namespace ub {

namespace {

std::string dtype_list(const std::vector<Dtype>& ds) { return fmt::format("{}", fmt::join(dtype_names(ds), ", ")); }

std::string x(std::optional<double> r) { return r ? fmt::format("{:.2f}x", *r) : "N/A"; }

void capability_part(const DecideInput& in, Decision& out) {
  const Accelerator& from = *in.from;
  const Accelerator& to = *in.to;
  std::vector<Dtype> neither, new_cannot_old_unknown, unknown;
  for (Dtype d : in.need) {
    const auto o = from.peak(d).executes(), n = to.peak(d).executes();
    if (n == false) {  // the new GPU cannot: lost if the old one can, "either" if it cannot, else unknown there
      (o == true ? out.lost_dtypes : o == false ? neither : new_cannot_old_unknown).push_back(d);
    } else if (!n.has_value() || !o.has_value()) {
      unknown.push_back(d);
    } else if (!*o) {
      out.missing_dtypes.push_back(d);
    }
  }
  out.capability_gap = !out.missing_dtypes.empty();
  if (!out.lost_dtypes.empty()) {
    out.verdict = "new-gpu-lacks-capability";
    out.reasons.push_back(fmt::format(
        "Capability: your recipe needs {}, which {} executes and {} cannot: the new GPU scores zero there, whatever "
        "its speed; this move loses it.", dtype_list(out.lost_dtypes), from.name, to.name));
  }
  if (!neither.empty()) {
    out.verdict = "new-gpu-lacks-capability";
    out.reasons.push_back(fmt::format(
        "Capability: {} cannot execute {} either; no upgrade to it gives you that.", to.name, dtype_list(neither)));
  }
  if (!new_cannot_old_unknown.empty()) {
    out.verdict = "new-gpu-lacks-capability";
    out.reasons.push_back(fmt::format(
        "Capability: {} cannot execute {} (whether {} does, the catalog cannot tell): the new GPU scores zero there.",
        to.name, dtype_list(new_cannot_old_unknown), from.name));
  }
  if (!unknown.empty()) {
    out.reasons.push_back(fmt::format(
        "Capability: the catalog cannot tell whether both GPUs execute {}; check the vendor's "
        "documentation.", dtype_list(unknown)));
  }
  if (out.capability_gap) {
    if (out.verdict.empty()) out.verdict = "upgrade-for-capability";
    out.reasons.push_back(fmt::format(
        "Capability: your recipe needs {}, which {} executes and {} cannot at all. The old GPU "
        "scores zero here, not \"slower\": that alone decides, no benchmark needed.",
        dtype_list(out.missing_dtypes), to.name, from.name));
  }
  // Dtypes needed that both execute: said, so a need is never silently answered.
  std::vector<Dtype> both;
  for (Dtype d : in.need) {
    if (to.peak(d).executes().value_or(false) && from.peak(d).executes().value_or(false)) both.push_back(d);
  }
  if (!both.empty()) {
    out.reasons.push_back(fmt::format("Capability: both {} and {} execute {}: no gap there, measurements decide.",
                                      from.name, to.name, dtype_list(both)));
  }
  // What the new GPU adds beyond the recipe's needs, and what each kind of dtype is for.
  std::vector<Dtype> more;
  for (Dtype d : out.specs.new_dtypes) {
    if (std::find(in.need.begin(), in.need.end(), d) == in.need.end()) more.push_back(d);
  }
  if (!more.empty()) {
    bool fp8 = false, fp4 = false, scaled = false;
    for (Dtype d : more) {
      fp8 = fp8 || d == Dtype::fp8;
      fp4 = fp4 || d == Dtype::fp4 || d == Dtype::fp6 || d == Dtype::nvfp4 || d == Dtype::mxfp4;
      scaled = scaled || d == Dtype::mxfp8 || d == Dtype::nvfp4 || d == Dtype::mxfp4;
    }
    std::vector<std::string> uses;
    if (fp8) uses.emplace_back("fp8 training and inference");
    if (fp4) uses.emplace_back("FP4 / FP6 inference");
    if (scaled) uses.emplace_back("microscaling training");
    out.reasons.push_back(fmt::format(
        "Capability: {} executes {}, which {} cannot. If your recipe needs one of them ({}), that alone decides: say "
        "so with --need-dtype.",
        to.name, dtype_list(more), from.name, fmt::join(uses, ", ")));
  }
  // Dtypes the catalog cannot tell for one of the two: never read as "no difference".
  std::vector<Dtype> new_only_known, old_only_known;
  for (Dtype d : out.specs.unknown_dtypes) {
    if (to.peak(d).executes().value_or(false)) new_only_known.push_back(d);
    if (from.peak(d).executes().value_or(false)) old_only_known.push_back(d);
  }
  if (in.need.empty() && !new_only_known.empty()) {
    out.reasons.push_back(fmt::format("Capability: {} executes {}; whether {} does, the catalog does not know: check "
                                      "the vendor's documentation before counting it a gap or not.", to.name,
                                      dtype_list(new_only_known), from.name));
  }
  if (in.need.empty() && !old_only_known.empty()) {
    out.reasons.push_back(fmt::format("Capability: {} executes {}; whether {} does, the catalog does not know: check "
                                      "the vendor's documentation before counting it kept or lost.", from.name,
                                      dtype_list(old_only_known), to.name));
  }
  if (in.need.empty() && out.specs.new_dtypes.empty()) {
    out.reasons.push_back(fmt::format(
        "Capability: {} executes no dtype that {} cannot{}; everything else it brings is more of what you have, so "
        "measurements decide.", to.name, from.name,
        out.specs.unknown_dtypes.empty()
            ? std::string()
            : fmt::format(", of those the catalog knows for both (not {})", dtype_list(out.specs.unknown_dtypes))));
  }
  if (!out.specs.new_dtypes.empty() || out.capability_gap) {
    out.reasons.push_back(
        "Software: the catalog says what the silicon executes, not what your framework, kernels "
        "and numerics recipe support today. Check your stack supports a feature before paying "
        "for it, and check again as support improves.");
  }
}

void memory_part(const DecideInput& in, Decision& out) {
  const Accelerator& from = *in.from;
  const Accelerator& to = *in.to;
  const auto cf = from.capacity_gib(), ct = to.capacity_gib();
  if (!cf || !ct) {
    out.reasons.push_back(fmt::format(
        "Memory: usable capacity is unknown for {}; no memory conclusion.",
        !cf ? from.name : to.name));
    return;
  }
  std::string line = fmt::format(
      "Memory: {:.0f} GiB usable on {} vs {:.0f} GiB on {} ({:.2f}x).", *ct, to.name, *cf,
      from.name, *ct / *cf);
  if (in.model) {
    const double params = static_cast<double>(in.model->parameter_count());
    const double state_gib = params * kTrainingStateBytesPerParam / (1024.0 * 1024 * 1024);
    const auto gpus = [&](double cap) { return static_cast<int>(std::ceil(state_gib / cap)); };
    line += fmt::format(
        " {} ({}B parameters) needs {} GiB of training state (16 bytes/parameter, "
        "activations not counted): at least {} {} vs {} {} with ZeRO-3 sharding.",
        in.model->id, fixed_decimals(params / 1e9, 2), fixed_decimals(state_gib, 0), gpus(*cf), from.id, gpus(*ct), to.id);
  }
  line += " More memory is usually a cost trade (fewer GPUs, less offload or checkpointing), not "
          "a capability: only when no parallelism you can afford fits the old GPU does it become "
          "one.";
  out.reasons.push_back(line);
}

void predicted_part(const DecideInput& in, Decision& out);

void performance_part(const DecideInput& in, Decision& out) {
  const SpecRatios& r = out.specs.ratios;
  out.reasons.push_back(fmt::format(
      "Compute-bound work (large GEMMs, long-context attention) is bounded by the bf16 peak ratio "
      "{} (fp8 {}); the published MAMF ratio, the realistic matmul ceiling, is {} (fp8 {}).",
      x(r.peak.at(Dtype::bf16)), x(r.peak.at(Dtype::fp8)), x(r.mamf_bf16), x(r.mamf_fp8)));
  out.reasons.push_back(fmt::format(
      "Bandwidth-bound work (norms, elementwise, optimizer, small-batch GEMMs, decode) is bounded "
      "by the HBM bandwidth ratio {}.", x(r.bandwidth)));

  if (in.price_from && in.price_to) {
    const double be = *in.price_to / *in.price_from;
    out.break_even_speedup = be;
    const std::optional<double> compute = r.peak.at(Dtype::bf16);
    std::optional<double> best = compute;
    if (r.bandwidth && (!best || *r.bandwidth > *best)) best = r.bandwidth;
    out.reasons.push_back(fmt::format(
        "Cost: break-even speedup is the price ratio {:.2f}x (USD {:.2f}/h vs {:.2f}/h): a "
        "measured speedup above it lowers $/token; below it the new GPU costs more per token and "
        "can only win on wall-clock time or memory headroom.", be, *in.price_to,
        *in.price_from));
    // Both bounds known, or the verdict is not drawn: a compute ceiling not published could be
    // above the break-even, and "no workload" would rest on the one figure that is known.
    if (!compute || !r.bandwidth) {
      const bool to_unknown = !compute ? !in.to->peak(Dtype::bf16).get() : !in.to->bandwidth_tbps.known();
      out.reasons.push_back(fmt::format(
          "Cost: the {} ceiling of the {} is not published, so the spec bound is one-sided: no cost verdict "
          "from the catalog; measure.", !compute ? "compute (bf16 peak)" : "HBM bandwidth",
          to_unknown ? in.to->id : in.from->id));
    } else if (best && *best < be && out.verdict.empty()) {
      const auto cf = in.from->capacity_gib(), ct = in.to->capacity_gib();
      out.verdict = "costlier-per-token";
      out.reasons.push_back(fmt::format(
          "Cost: even the best spec ceiling ({:.2f}x) is below break-even: no workload will lower $/token on the "
          "new GPU at these prices{}.", *best,
          cf && ct && *ct > *cf ? ", unless its extra memory lets you drop parallelism, offload or checkpointing" : ""));
    } else if (compute && r.bandwidth) {
      out.reasons.push_back(fmt::format(
          "Cost: compute-bound work can {} break-even ({} ceiling), bandwidth-bound work {} "
          "({} ceiling).", *compute >= be ? "beat" : "not reach", x(compute),
          *r.bandwidth >= be ? "can beat it" : "cannot reach it", x(r.bandwidth)));
    }
  }
  out.reasons.push_back(
      "Time: a faster GPU also shortens wall-clock time, which $/token does not price; weigh it "
      "on its own axis.");
  if (!in.predicted.empty()) {
    predicted_part(in, out);
    return;
  }
  out.reasons.push_back(
      "Part 2 is decided by measurement: run your workload on both GPUs with the same software "
      "stack, sweeping what moves the attention/dense balance (sequence length), and compare the "
      "measured runs point by point.");
}

// Part 2 PREDICTED from the old GPU's measurement (docs/predict.md): each length's speedup interval
// against the break-even.
void predicted_part(const DecideInput& in, Decision& out) {
  size_t cheaper = 0, costlier = 0, known = 0;
  for (const Prediction& p : in.predicted) {
    const std::string at = p.input.seqlen ? fmt::format(" at {} tokens", *p.input.seqlen) : "";
    if (!p.speedup) {
      out.reasons.push_back(fmt::format("PREDICTED{} (from {}): N/A, a figure it needs is unknown.", at, p.input.path));
      continue;
    }
    ++known;
    cheaper += p.cost_verdict.rfind("CHEAPER", 0) == 0;
    costlier += p.cost_verdict.rfind("COSTLIER", 0) == 0;
    out.reasons.push_back(fmt::format("PREDICTED{} (from {} {} the {}): {:.2f}x ({:.2f}-{:.2f}x), limited by "
                                      "{}{}.", at, p.input.path,
                                      p.input.provenance.measured() ? "measured on" : "example data, not measured, of",
                                      p.old_id, *p.speedup, *p.speedup_low,
                                      *p.speedup_high, p.limiting,
                                      p.cost_verdict.empty() ? "" : "; " + p.cost_verdict));
  }
  if (out.verdict.empty() && known == in.predicted.size() && known > 0) {
    if (costlier == known) out.verdict = "predicted-costlier-per-token";
    else if (cheaper == known) out.verdict = "predicted-cheaper-per-token";
  }
  out.reasons.push_back(
      "Part 2 here is PREDICTED from a measurement of the old GPU only: measure your workload on the new GPU "
      "(an hour of `mamf`, `attention` and `bandwidth` there sharpens the prediction; `compare` decides).");
}

}  // namespace

Decision decide(const DecideInput& in) {
  if (!in.from || !in.to) throw UsageError("decide: both --from and --to are needed");
  for (const auto* p : {&in.price_from, &in.price_to}) {
    if (*p && !(**p > 0)) {
      throw UsageError(fmt::format("prices must be positive USD per GPU-hour, got {}", **p));
    }
  }
  if (in.price_from.has_value() != in.price_to.has_value()) {
    throw UsageError("give both --price-old and --price-new (or their older names --price-from and --price-to), or neither");
  }
  Decision out;
  out.specs = compare_specs(*in.from, *in.to);
  capability_part(in, out);
  memory_part(in, out);
  performance_part(in, out);
  if (out.verdict.empty()) out.verdict = "measure";
  return out;
}

}  // namespace ub
