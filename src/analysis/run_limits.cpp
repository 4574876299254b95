#include "analysis/run_limits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/error.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "facts/dtype.hpp"
#include "facts/flops.hpp"

namespace ub {

void refuse_impossible_points(const RunLog& run, const Accelerator* gpu, const RunStepFlops& step_flops) {
  const std::optional<Dtype> dt = parse_dtype(run.dtype);
  const std::optional<Accelerator::StepBound> most_step = gpu && dt ? gpu->most_step_tflops(*dt) : std::nullopt;
  const std::string file = printable(run.path);
  for (const RunPoint& p : run.points) {
    if (p.status != PointStatus::ok || !p.steps.has_steady()) continue;
    const PointStats st = point_stats(run, p);
    const std::optional<double> flops = step_flops ? step_flops(p.seqlen) : std::nullopt;
    // Warm-up steps count in no figure, and are held to the same limits: a file that logs them
    // past a GPU's peak is not a measurement either.
    const std::vector<StepSample>& warmup = p.steps.warmup_extremes();
    const auto where = [&](const StepSample& x) { return x.line > 0 ? fmt::format(":{}", x.line) : std::string(); };
    if (flops && most_step) {
      double shortest = st.time_ms.min;
      std::string shortest_at;
      for (const StepSample& x : p.steps.steady()) {
        if (x.exec_time_ms <= shortest) shortest = x.exec_time_ms, shortest_at = where(x);
      }
      for (const StepSample& x : warmup) {
        if (x.exec_time_ms < shortest) shortest = x.exec_time_ms, shortest_at = where(x);
      }
      const double fastest = *flops / (shortest * 1e9);
      if (fastest > most_step->tflops) {
        throw WorkError(fmt::format("{}{}: seqlen {}: a step of {:g} ms is {:.3g} TFLOPS of the model's FLOPs, past the {}'s "
                                    "{}: not a measurement", file, shortest_at, p.seqlen, shortest, fastest, gpu->id,
                                    most_step->what));
      }
    }
    // Each step's TFLOPS is its work over its time: against the model's FLOPs where they are
    // known, else against the point's other steps (one workload does the same work each step).
    std::vector<double> work;
    for (const StepSample& x : p.steps.steady()) {
      if (x.tflops) work.push_back(*x.tflops * x.exec_time_ms * 1e9);
    }
    if (!work.empty() || flops) {
      double expected = 0;
      if (flops) {
        expected = *flops;
      } else {
        const auto middle = work.begin() + static_cast<std::ptrdiff_t>(work.size() / 2);
        std::nth_element(work.begin(), middle, work.end());
        expected = *middle;
      }
      const auto check = [&](const StepSample& x) {
        if (!x.tflops) return;
        const double implied = expected / (x.exec_time_ms * 1e9);
        if (std::abs(*x.tflops / implied - 1) > 0.05) {
          throw WorkError(fmt::format("{}{}: seqlen {}: a step of {:g} ms logged at {:.1f} TFLOPS, where {} {:.1f}: one of "
                                      "the two figures is wrong", file, where(x), p.seqlen, x.exec_time_ms, *x.tflops,
                                      flops ? "the model's FLOPs over that time are" : "the work of its other steps gives",
                                      implied));
        }
      };
      for (const StepSample& x : p.steps.steady()) check(x);
      for (const StepSample& x : warmup) check(x);
    }
    double most_logged = st.tflops ? st.tflops->max : 0;
    std::string line;
    for (const StepSample& x : warmup) {
      if (x.tflops && *x.tflops > most_logged) most_logged = *x.tflops, line = where(x);
    }
    if (most_step && most_logged > most_step->tflops) {
      throw WorkError(fmt::format("{}{}: seqlen {}: {:.1f} TFLOPS logged, past the {}'s {}: not a measurement", file, line,
                                  p.seqlen, most_logged, gpu->id, most_step->what));
    }
    if (st.peak_mem_gib && gpu) {
      const int peak_line = p.steps.peak_mem_line();
      refuse_peak_past_memory(*st.peak_mem_gib, *gpu, fmt::format("{}{}: seqlen {}", file,
                                                                  peak_line > 0 ? fmt::format(":{}", peak_line) : "", p.seqlen));
    }
  }
}

void refuse_expert_tokens_not_of(const RunLog& run, const ModelShape& model) {
  for (const RunPoint& p : run.points) {
    for (const std::optional<TrainStep::ExpertTokens>& e : {p.steps.expert_tokens(), p.expert_tokens}) {
      if (!e) continue;
      const std::string where = fmt::format("{}{}: seqlen {}", printable(run.path),
                                            p.line > 0 ? fmt::format(":{}", p.line) : "", p.seqlen);
      if (!model.moe) {
        throw WorkError(fmt::format("{}: tokens per expert, in a run of {}, a model without experts: the records are of "
                                    "another model than they name", where, printable(model.id)));
      }
      int64_t moe_layers = 0;
      for (int64_t i = 0; i < model.layers; ++i) moe_layers += model.is_moe_layer(i) ? 1 : 0;
      if (moe_layers == 0) {
        throw WorkError(fmt::format("{}: tokens per expert, in a run of the first {} layers of {}, none of which has "
                                    "experts: the records are of another model or depth than they name", where,
                                    model.layers, printable(model.id)));
      }
      // Top-k routing sends each token to k distinct experts: the rows (experts of each layer)
      // share top_k x tokens, so the busiest takes at least their mean and the least at most; and
      // the half of the rows at or above the median hold no more than all of them, so the median
      // is at most the layers' routed tokens over half the rows.
      const double tokens = static_cast<double>(model.moe->top_k) * static_cast<double>(run.batch * p.seqlen);
      const double mean = tokens / static_cast<double>(model.moe->experts);
      const int64_t rows = moe_layers * model.moe->experts;
      const double most_median = static_cast<double>(moe_layers) * tokens / static_cast<double>((rows + 1) / 2);
      if (e->median > most_median * (1 + 1e-9)) {
        throw WorkError(fmt::format("{}: tokens per expert with a median of {:g}, where half of {}'s {} experts in {} "
                                    "layers would then take more than the {:g} tokens they route (top-{} of {}): the "
                                    "records are of another model, batch or length than they say", where, e->median,
                                    printable(model.id), model.moe->experts, moe_layers,
                                    static_cast<double>(moe_layers) * tokens, model.moe->top_k, run.batch * p.seqlen));
      }
      if (e->max < mean * (1 - 1e-9) || e->min > mean * (1 + 1e-9)) {
        throw WorkError(fmt::format("{}: tokens per expert from {:g} to {:g}, where {}'s {} experts take {:g} on average "
                                    "(top-{} of {} tokens), and the busiest takes at least that, the least at most: the records "
                                    "are of another model, batch or length than they say",
                                    where, e->min, e->max, printable(model.id), model.moe->experts, mean,
                                    model.moe->top_k, run.batch * p.seqlen));
      }
      // Sorted, the lower half of the rows (ceil(R/2)) take at most the median and the rest at
      // most the busiest; the upper half (floor(R/2)) at least the median and the rest at least
      // the least. The routed tokens lie between (a step whose median is at most, or at least,
      // the one given exists, every step routing the same).
      const double routed = static_cast<double>(moe_layers) * tokens;
      const double lower_rows = static_cast<double>((rows + 1) / 2), upper_rows = static_cast<double>(rows / 2);
      const double most = lower_rows * e->median + upper_rows * e->max;
      const double least = upper_rows * e->median + lower_rows * e->min;
      if (routed > most * (1 + 1e-9) || routed < least * (1 - 1e-9)) {
        throw WorkError(fmt::format("{}: tokens per expert of least {:g}, median {:g} and most {:g} give the {} experts "
                                    "of {}'s {} MoE layers {:g} to {:g} tokens, where they route {:g} (top-{} of {}): no "
                                    "routing gives them; the records are of another model, batch or length than they say",
                                    where, e->min, e->median, e->max, rows, printable(model.id), moe_layers, least, most,
                                    routed, model.moe->top_k, run.batch * p.seqlen));
      }
    }
  }
}

namespace {

// A printout's whole step: its TOTAL line's FLOPs and time, else its buckets' sums where each says
// its FLOPs (a printout cut of its TOTAL line is held to the same bounds).
struct PrintoutStep {
  double tflop = 0, ms = 0;
};
std::optional<PrintoutStep> printout_step(const DecompositionLog& d) {
  PrintoutStep sum;
  bool every_bucket = !d.buckets.empty();
  for (const DecompositionBucket& b : d.buckets) {
    if (b.name == "TOTAL") return b.tflop ? std::optional(PrintoutStep{*b.tflop, b.ms}) : std::nullopt;
    if (b.tflop) sum.tflop += *b.tflop, sum.ms += b.ms;
    else every_bucket = false;
  }
  return every_bucket ? std::optional(sum) : std::nullopt;
}

// The length whose work of `model` (one sequence) is `tflop`, within 2%; none when no length is.
std::optional<int64_t> length_of_work(const ModelShape& model, double tflop) {
  const auto work = [&](int64_t s) { return to_tflop(step_flops(model, s, FlopOptions{}).total()); };
  int64_t lo = 1, hi = int64_t{1} << 26;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (work(mid) < tflop) lo = mid + 1;
    else hi = mid;
  }
  // A printout's FLOPs are rounded to hundredths of a TFLOP, a token's worth: a round length (of
  // 1024, then 128 tokens) whose work is the step's to a tenth of a percent is the length it ran.
  for (const int64_t unit : {1024, 128}) {
    const int64_t round = std::max<int64_t>(unit, (lo + unit / 2) / unit * unit);
    if (std::abs(work(round) / tflop - 1) <= 0.001) return round;
  }
  for (const int64_t s : {lo, std::max<int64_t>(1, lo - 1)}) {
    if (std::abs(work(s) / tflop - 1) <= 0.02) return s;
  }
  return std::nullopt;
}

}  // namespace

void refuse_impossible_decomposition(const DecompositionLog& d, const Catalog& catalog) {
  const Accelerator* gpu = catalog.try_find(d.gpu);
  if (!gpu) return;
  if (const auto mem = d.summary.find("peak_mem"); mem != d.summary.end()) {
    char* end = nullptr;
    const double gib = std::strtod(mem->second.c_str(), &end);  // checked a number by the reader
    if (end != mem->second.c_str()) refuse_peak_past_memory(gib, *gpu, printable(d.path) + ": the `# wall` line");
  }
  const std::optional<double> peak = gpu->peak(Dtype::bf16).get();
  if (!peak || *peak <= 0) return;
  const double most = *gpu->most_measurable_tflops(Dtype::bf16);
  for (const DecompositionBucket& b : d.buckets) {
    if (b.tflops && *b.tflops > most) {
      throw WorkError(fmt::format("{}: bucket \"{}\": {:.1f} TFLOPS is past the {}'s dense bf16 peak ({:.0f} TFLOPS): not a "
                                  "measurement", printable(d.path), printable(b.name), *b.tflops, gpu->id, *peak));
    }
  }
  // The whole step (its TOTAL line) is held to what a step can reach, each bucket to the peak.
  const std::optional<PrintoutStep> whole = printout_step(d);
  if (const std::optional<Accelerator::StepBound> step = gpu->most_step_tflops(Dtype::bf16); step && whole && whole->ms > 0) {
    if (const double tflops = whole->tflop / whole->ms * 1e3; tflops > step->tflops) {
      throw WorkError(fmt::format("{}: the whole step at {:.1f} TFLOPS is past the {}'s {}: not a measurement",
                                  printable(d.path), tflops, gpu->id, step->what));
    }
  }
  for (const DecompositionBucket& b : d.buckets) {
    if (!b.mfu_percent || !b.tflops) continue;
    const double implied = 100 * *b.tflops / *peak;
    if (std::abs(*b.mfu_percent - implied) > 0.1 + 0.01 * implied) {
      throw WorkError(fmt::format("{}: bucket \"{}\": MFU {:g}% is not its {:g} TFLOPS over the {}'s dense bf16 peak of "
                                  "{:g} ({:.1f}%): one of the two is wrong", printable(d.path), printable(b.name),
                                  *b.mfu_percent, *b.tflops, gpu->id, *peak, implied));
    }
  }
}

std::optional<std::string> unknown_gpu_warning(const std::string& gpu, const Catalog& catalog, const std::string& where) {
  if (gpu.empty() || catalog.try_find(gpu)) return std::nullopt;
  return fmt::format("{}: the catalog does not know the \"{}\": its figures are held to no peak, bandwidth or memory, "
                     "and no capability is checked (docs/catalog.md: a name goes into its entry's aliases)", where,
                     ascii_printable(gpu));
}

void refuse_step_not_of_model(const std::string& path, double step_tflop, int64_t seqlen, int64_t batch,
                              const ModelShape& model, const std::string& remedy, StepWork work) {
  FlopOptions fo;
  fo.batch = batch;
  const double expected = to_tflop(step_flops(model, seqlen, fo).total());
  // What kernels execute is the model's work and more, never more than every recompute adds
  // (FlashAttention's backward recomputing the scores, the forward checkpointing runs again).
  fo.flash_backward = fo.recompute = true;
  const double most = work == StepWork::executed ? to_tflop(step_flops(model, seqlen, fo).total()) : expected;
  if (step_tflop < expected * 0.98 || step_tflop > most * 1.02) {
    throw WorkError(fmt::format("{}: a step of {:.2f} TFLOP is not {}'s work at {} tokens{} ({}): its length or its "
                                "FLOPs are wrong{}", printable(path), step_tflop, model.id, seqlen,
                                batch > 1 ? fmt::format(" x {} sequences", batch) : "",
                                work == StepWork::executed ? fmt::format("{:.2f} TFLOP, and its kernels {:.2f} at most",
                                                                         expected, most)
                                                           : fmt::format("{:.2f} TFLOP", expected), remedy));
  }
}

std::optional<int64_t> refuse_printout_not_of_model(const DecompositionLog& d, const ModelShape& model,
                                                    const std::string& remedy) {
  if (!d.header.contains("gpu") && !d.header.contains("seq")) return std::nullopt;  // our records: not a printout
  const std::optional<PrintoutStep> step = printout_step(d);
  if (!step) return d.seqlen;
  // bench_decompose.py prints its length; a printout without one is held to the length its work is.
  std::optional<int64_t> seqlen = d.seqlen;
  if (!seqlen) {
    seqlen = length_of_work(model, step->tflop / static_cast<double>(d.batch));
    if (!seqlen) {
      throw WorkError(fmt::format("{}: a step of {:.2f} TFLOP, and no seq= in its header: the work of {} at no length "
                                  "is that{}", printable(d.path), step->tflop, model.id, remedy));
    }
  }
  refuse_step_not_of_model(d.path, step->tflop, *seqlen, d.batch, model, remedy);
  // The step's work split as the script splits it: FlashAttention's FLOPs, and the rest (a split
  // moved between them would make attention look ten times as fast, the rest slower).
  FlopOptions batch;
  batch.batch = d.batch;
  const StepFlops f = step_flops(model, *seqlen, batch);
  for (const DecompositionBucket& b : d.buckets) {
    const std::optional<double> expected = b.name == "attention(FA)"     ? std::optional(to_tflop(f.attention))
                                           : b.name == "everything else" ? std::optional(to_tflop(f.dense))
                                                                         : std::nullopt;
    if (!expected || !b.tflop || std::abs(*b.tflop - *expected) <= 0.02 * *expected + 0.01) continue;
    throw WorkError(fmt::format("{}: bucket \"{}\" holds {:.2f} TFLOP, and {}'s {} at {} tokens is {:.2f} TFLOP: the "
                                "step's work is split otherwise than the script splits it{}", printable(d.path), b.name,
                                *b.tflop, model.id, b.name == "attention(FA)" ? "attention" : "work besides attention",
                                *seqlen, *expected, remedy));
  }
  return seqlen;
}

namespace {

// What bounds a TFLOPS figure in `dt` on `gpu`: a dtype the GPU does not execute (no figure is a
// measurement), or the most it measures; nothing for a GPU or dtype the catalog does not know.
struct DtypeBound {
  bool unsupported = false;
  std::optional<double> most;
};
DtypeBound dtype_bound(const Accelerator* gpu, std::optional<Dtype> dt) {
  if (!gpu || !dt) return {};
  if (gpu->peak(*dt).state == FigureState::unsupported) return {true, std::nullopt};
  return {false, gpu->most_measurable_tflops(*dt)};
}

}  // namespace

void refuse_impossible_ceiling(const MamfLog& l, const Catalog& catalog) {
  const Accelerator* gpu = catalog.try_find(l.gpu);
  // "fp8 (e5m2)" (mamf-finder.py's float8_e5m2) runs at fp8's peak.
  const std::string dtype = l.dtype.empty() ? "bf16" : l.dtype.substr(0, l.dtype.find(" ("));
  const std::optional<Dtype> dt = parse_dtype(dtype);
  const DtypeBound bound = dtype_bound(gpu, dt);
  if (bound.unsupported && !l.outcome.shapes.empty()) {
    throw WorkError(fmt::format("{}: matmuls in {} on the {}, which does not execute {} (the catalog): not a measurement",
                                printable(l.path), to_string(*dt), gpu->id, to_string(*dt)));
  }
  const std::optional<double> most = bound.most;
  if (!most) return;
  for (const MamfShape& s : l.outcome.shapes) {
    if (!s.ok) continue;
    const double fastest = std::max({s.mean_tflops, s.median_tflops, s.max_tflops});
    if (fastest > *most) {
      throw WorkError(fmt::format("{}: {} at {:.1f} TFLOPS is past the {}'s dense {} peak ({:.0f} TFLOPS): not a "
                                  "measurement", printable(l.path), s.shape(), fastest, gpu->id, to_string(*dt),
                                  gpu->peak(*dt).value));
    }
  }
}

void refuse_impossible_stored_figure(const std::string& where, const std::string& metric, double x, double median,
                                     const std::string& gpu_name, const Catalog& catalog) {
  if (metric.find("tflops") == std::string::npos) return;
  const Accelerator* gpu = catalog.try_find(gpu_name);
  const std::string prefix = "mamf.tflops.";
  const std::optional<Dtype> dt = parse_dtype(metric.rfind(prefix, 0) == 0 ? metric.substr(prefix.size()) : "bf16");
  const DtypeBound bound = dtype_bound(gpu, dt);
  if (bound.unsupported) {
    throw WorkError(fmt::format("{}: {} at {:g}: the {} does not execute {} (the catalog): no figure `history add` "
                                "stores (the database was edited or damaged)", where, printable(metric), x, gpu->id,
                                to_string(*dt)));
  }
  const std::optional<double> most = bound.most;
  if (most && median > *most) {
    throw WorkError(fmt::format("{}: {} at {:g} is {:.1f} TFLOPS, past the {}'s dense {} peak ({:.0f} TFLOPS): no figure "
                                "`history add` stores (the database was edited or damaged)", where, printable(metric), x,
                                median, gpu->id, to_string(*dt), gpu->peak(*dt).value));
  }
}

void refuse_impossible_attention(const AttentionLog& l, const Catalog& catalog) {
  const Accelerator* gpu = catalog.try_find(l.gpu);
  const std::optional<double> most = gpu ? gpu->most_measurable_tflops(Dtype::bf16) : std::nullopt;
  if (!most) return;
  for (const AttentionRecord& p : l.points) {
    for (const std::optional<double> t : {std::optional<double>(p.fwd_tflops), p.fwd_bwd_tflops}) {
      if (t && *t > *most) {
        throw WorkError(fmt::format("{}: seqlen {}: {:.1f} TFLOPS is past the {}'s dense bf16 peak ({:.0f} TFLOPS): not "
                                    "a measurement", printable(l.path), p.seqlen, *t, gpu->id, gpu->peak(Dtype::bf16).value));
      }
    }
  }
}

void refuse_impossible_bandwidth(const BandwidthLog& l, const Catalog& catalog) {
  const Accelerator* gpu = catalog.try_find(l.gpu);
  if (!gpu || !gpu->bandwidth_tbps.known()) return;
  const double most = 1.1 * gpu->bandwidth_tbps.value * 1000;
  for (const BandwidthRecord& r : l.points) {
    if (!r.ok) continue;
    // A buffer larger than the L2 is not L2-resident, whatever its record says.
    if (r.in_l2 && gpu->last_level_cache_mib.known() &&
        static_cast<double>(r.bytes) > gpu->last_level_cache_mib.value * double(1 << 20)) {
      throw WorkError(fmt::format("{}: {} of {} bytes is marked L2-resident, larger than the {}'s {:.0f} MiB L2: not a "
                                  "measurement", printable(l.path), printable(r.op), r.bytes, gpu->id,
                                  gpu->last_level_cache_mib.value));
    }
    const double fastest = std::max({r.mean_gbps, r.median_gbps, r.max_gbps});
    if (!r.in_l2 && fastest > most) {
      throw WorkError(fmt::format("{}: {} of {} bytes at {:.1f} GB/s is past the {}'s memory bandwidth ({:.0f} GB/s): "
                                  "not a measurement", printable(l.path), printable(r.op), r.bytes, fastest, gpu->id,
                                  gpu->bandwidth_tbps.value * 1000));
    }
  }
}

void refuse_peak_past_memory(double peak_gib, const Accelerator& gpu, const std::string& where) {
  const std::optional<double> most = gpu.most_measurable_gib();
  if (most && peak_gib > *most) {
    throw WorkError(fmt::format("{}: a peak of {:g} GiB in use, more than the {} holds ({:.1f} GiB): not a measurement",
                                where, peak_gib, gpu.id, *most / 1.02));
  }
}

}  // namespace ub
