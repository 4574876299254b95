// The decision from two GPUs' measurements; see upgrade_decision.hpp.
#include "analysis/upgrade_decision.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <array>
#include <set>

#include "analysis/decision_summary.hpp"
#include "analysis/energy_summary.hpp"
#include "analysis/run_limits.hpp"
#include "facts/model_shape.hpp"
#include "base/error.hpp"
#include "base/text.hpp"

namespace ub {

namespace {

std::string tokens(int64_t s) { return s % 1024 == 0 ? fmt::format("{}k", s / 1024) : fmt::format("{}", s); }

std::optional<double> ratio_of(std::optional<double> n, std::optional<double> o) {
  if (!n || !o || !(*o > 0)) return std::nullopt;
  return *n / *o;
}

// A component and its version as the stack line says them: "torch 2.11.0", and "upgradebench
// 0.1.0" for a version that already starts with its component's name.
std::string component_text(const std::string& component, const std::string& version) {
  return version.rfind(component, 0) == 0 ? version : component + " " + version;
}

// What differs between the two stacks, of what both name; the driver apart (two machines
// rarely share it, and it is named, not refused).
std::vector<std::string> stack_differences(const MeasurementSet& o, const MeasurementSet& n,
                                           std::vector<std::string>& warnings) {
  std::vector<std::string> out;
  // The program that ran the steps, ours on one side and torch under a peer's script on the other,
  // is other software however alike the libraries under it (a side whose parts name neither, one
  // cut short, says nothing).
  const auto engine = [](const std::map<std::string, std::string>& stack) -> std::string {
    if (stack.contains("upgradebench")) return "upgradebench";
    return stack.contains("torch") ? "torch" : "";
  };
  if (const std::string a = engine(o.stack), b = engine(n.stack); !a.empty() && !b.empty() && a != b) {
    out.push_back(fmt::format("the steps ran under {} (old) vs {} (new)", component_text(a, o.stack.at(a)),
                              component_text(b, n.stack.at(b))));
  }
  for (const auto& [k, v] : o.stack) {
    const auto it = n.stack.find(k);
    if (it == n.stack.end() || it->second == v) continue;
    if (k == "driver" || k == "cuda_driver_api") {
      warnings.push_back(fmt::format("the driver differs: {} {} (old) vs {} (new)", k, v, it->second));
      continue;
    }
    out.push_back(fmt::format("{} {} (old) vs {} (new)", k, v, it->second));
  }
  return out;
}

std::optional<double> best_median(const std::optional<MamfLog>& m) {
  if (!m) return std::nullopt;
  const auto b = m->best(MamfOutcome::By::median);
  return b ? std::optional<double>(b->median_tflops) : std::nullopt;
}

std::optional<double> step_rate(const std::optional<MamfLog>& m) {
  return m ? m->outcome.step_tflops() : std::nullopt;
}

void add_ratios(UpgradeDecision& d, const MeasurementSet& o, const MeasurementSet& n) {
  const Accelerator* a = d.old_accel;
  const Accelerator* b = d.new_accel;
  const auto mamf = [](const Accelerator* g) {
    return g && g->mamf_bf16 ? g->mamf_bf16->tflops.get() : std::nullopt;
  };
  const auto peak = [](const Accelerator* g) { return g ? g->peak(Dtype::bf16).get() : std::nullopt; };
  const auto hbm = [](const Accelerator* g) {
    return g && g->bandwidth_tbps.known() ? std::optional<double>(g->bandwidth_tbps.value * 1000) : std::nullopt;
  };
  if (o.ceiling || n.ceiling) {
    d.ratios.push_back({"matmul ceiling (best median, bf16)", best_median(o.ceiling), best_median(n.ceiling),
                        ratio_of(best_median(n.ceiling), best_median(o.ceiling)), ratio_of(mamf(b), mamf(a)), "TFLOPS",
                        "against the published MAMF ratio"});
  }
  if (o.step_products || n.step_products) {
    d.ratios.push_back({"the step's own products, as the step runs them", step_rate(o.step_products),
                        step_rate(n.step_products), ratio_of(step_rate(n.step_products), step_rate(o.step_products)),
                        ratio_of(peak(b), peak(a)), "TFLOPS", "against the dense bf16 peak ratio"});
  }
  if (o.bandwidth || n.bandwidth) {
    const auto og = o.bandwidth ? o.bandwidth->hbm_gbps("copy") : std::nullopt;
    const auto ng = n.bandwidth ? n.bandwidth->hbm_gbps("copy") : std::nullopt;
    d.ratios.push_back({"HBM copy (best median beyond L2)", og, ng, ratio_of(ng, og), ratio_of(hbm(b), hbm(a)), "GB/s",
                        "against the datasheet bandwidth ratio"});
  }
}

// Pairs the two sets' decompositions: the i-th of each (a suite writes the shortest length first).
// A bench_decompose.py printout is held to its model's work at its length first, as `predict` does.
void add_decompositions(UpgradeDecision& d, const MeasurementSet& o, const MeasurementSet& n, const Catalog& catalog,
                        const std::filesystem::path& models_dir) {
  for (const MeasurementSet* s : {&o, &n}) {
    for (const DecompositionLog& l : s->decompositions) {
      if (l.records.empty()) refuse_printout_not_of_model(l, load_model(kPrintoutModel, models_dir), "");
    }
  }
  for (size_t i = 0; i < std::min(o.decompositions.size(), n.decompositions.size()); ++i) {
    d.decompositions.push_back(compare_decomposition(o.decompositions[i], n.decompositions[i], catalog));
  }
}

struct LengthsByCost {
  std::vector<int64_t> all, cheaper, costlier, even, only_new, only_old;
};

LengthsByCost by_cost(const Comparison& c) {
  LengthsByCost l;
  for (const CompareRow& r : c.rows) {
    if (r.note == "old cannot run this") l.only_new.push_back(r.seqlen);
    if (r.note == "new cannot run this") l.only_old.push_back(r.seqlen);
    if (!r.speedup) continue;
    l.all.push_back(r.seqlen);
    if (!c.break_even) continue;
    // Too few steps for a 95% interval (min..max of fewer than six): undecided, whatever it spans.
    if (r.speedup->verdict == Verdict::few_samples) l.even.push_back(r.seqlen);
    else if (r.speedup->low > *c.break_even) l.cheaper.push_back(r.seqlen);
    else if (r.speedup->high < *c.break_even) l.costlier.push_back(r.seqlen);
    else l.even.push_back(r.seqlen);
  }
  return l;
}

// Dropless routing makes the busiest expert the step's pace: two runs whose busiest expert took
// other counts of tokens (beyond what numerics flip at a near tie) timed other work. What differs at
// the first such length, or nullopt.
std::optional<std::string> expert_balance_difference(const Comparison& c) {
  constexpr double kTolerance = 0.10;
  for (const CompareRow& r : c.rows) {
    const auto& a = r.old_side.expert_tokens;
    const auto& b = r.new_side.expert_tokens;
    if (!a || !b) continue;
    const double most = std::max(a->max, b->max);
    if (most > 0 && std::abs(a->max - b->max) > kTolerance * most) {
      return fmt::format("at {} tokens the busiest expert took {:.0f} tokens on the {} and {:.0f} on the {}", r.seqlen,
                         a->max, c.old_run.gpu, b->max, c.new_run.gpu);
    }
  }
  return std::nullopt;
}

// The speedup's span over the lengths measured on both: "1.69-2.03x".
std::string speedup_span(const Comparison& c) {
  double lo = 1e300, hi = 0;
  for (const CompareRow& r : c.rows) {
    if (!r.speedup) continue;
    lo = std::min(lo, r.speedup->ratio), hi = std::max(hi, r.speedup->ratio);
  }
  if (hi == 0) return "not measured";
  return span_text(fmt::format("{:.2f}", lo), fmt::format("{:.2f}", hi)) + "x";
}

const CompareRow* row_at(const Comparison& c, int64_t seqlen) {
  for (const CompareRow& r : c.rows) {
    if (r.seqlen == seqlen) return &r;
  }
  return nullptr;
}

// The lever that takes GPU `g` furthest: "393216 with checkpointing + offloaded checkpoints".
std::string best_lever(const LeverLadder& ladder, size_t g) {
  const LeverRung* best = ladder.furthest(g);
  return best ? fmt::format("{} with {}", *best->longest[g].tokens, best->levers.name()) : "unknown";
}

// The memory question per lever: each lever's longest sequence on both GPUs, then whether and at
// what step time the old GPU reaches the length the team needs.
void lever_reasons(UpgradeDecision& d, const UpgradeOptions& opt) {
  const LeverLadder& ladder = *d.levers;
  const LeverRung& base = ladder.rungs.front();
  for (const LeverRung& r : ladder.rungs) {
    const auto tokens = [](const LongestSequence& l) { return l.cell(); };
    d.reasons.push_back(fmt::format(
        "Memory levers, {}: the longest sequence {} on the {} ({}), {} on the {} ({}){}.", r.levers.name(),
        tokens(r.longest[0]), ladder.gpus[0].name, r.longest[0].how, tokens(r.longest[1]), ladder.gpus[1].name,
        r.longest[1].how,
        r.step_time_ratio ? fmt::format("; its step takes {:.2f}x the time of {} at {} tokens", *r.step_time_ratio,
                                        base.levers.name(), *r.cost_at)
                          : ""));
  }
  if (!opt.need_seqlen) return;
  const int64_t need = *opt.need_seqlen;
  const LeverRung* old_reach = ladder.first_reaching(0, need);
  if (!old_reach) {
    d.reasons.push_back(fmt::format("Memory: no lever measured takes the {} to {} tokens (the furthest: {}).", d.old_gpu,
                                    need, best_lever(ladder, 0)));
    return;
  }
  std::string cost;
  if (old_reach->step_time_ratio) {
    cost = fmt::format(", at {:.2f}x the step time of {} ({} tokens)", *old_reach->step_time_ratio, base.levers.name(),
                       *old_reach->cost_at);
  } else if (old_reach != &base) {
    cost = fmt::format(" (its step time was not measured at a length {} also ran)", base.levers.name());
  }
  if (const auto guess = old_reach->longest[0].guess()) {
    d.reasons.push_back(fmt::format("Memory: whether the {} reaches the {} tokens the team needs with {} rests on a guess: "
                                    "{}.", d.old_gpu, need, old_reach->levers.name(), *guess));
    return;
  }
  d.reasons.push_back(fmt::format(
      "Memory: the {} reaches the {} tokens the team needs with {}{}: a cost in step time, not a capability gap.", d.old_gpu,
      need, old_reach->levers.name(), cost));
}

// The suite's sweep of the old GPU beside its runs with other levers, read for both GPUs. Where the
// new GPU's own sweep ran with a rung's levers, what it measured there (an out of memory, a
// --find-max) is that rung's figure on the new GPU, as the headroom line says, not the old runs' fit.
void add_levers(UpgradeDecision& d, const MeasurementSet& o, const MeasurementSet* n, const Catalog& catalog,
                const UpgradeOptions& opt) {
  if (opt.old_levers.empty()) return;
  if (!o.sweep) throw UsageError(fmt::format("--levers: {} has no training sweep to set the other levers beside", o.where));
  std::vector<const RunLog*> runs{&*o.sweep};
  runs.insert(runs.end(), opt.old_levers.begin(), opt.old_levers.end());
  for (const RunLog* r : opt.old_levers) {
    if (!d.old_accel || catalog.try_find(r->gpu) != d.old_accel) {
      throw UsageError(fmt::format("--levers {}: measured on {}, not on the old GPU ({}): the levers are the old GPU's",
                                   r->path, r->gpu.empty() ? "an unknown GPU" : r->gpu, d.old_gpu));
    }
  }
  // A run of example data makes the page example data: said in its banner and on every row.
  for (const RunLog* r : opt.old_levers) {
    if (r->provenance.empty()) continue;
    const Provenance p{Origin::example, r->provenance};
    d.provenance = weaker(d.provenance, p);
    d.provenance_notes.push_back(not_measured_line(r->path, p));
  }
  std::vector<LadderGpu> gpus;
  for (const Accelerator* a : {d.old_accel, d.new_accel}) {
    if (!a) throw UsageError("--levers: both GPUs must be in the catalog to read the memory fits at their capacity");
    gpus.push_back({a->id, a->capacity_gib(), [&catalog, a](const RunLog& r) { return catalog.try_find(r.gpu) == a; }});
  }
  d.levers = lever_ladder(runs, std::move(gpus), {o.found});
  if (!n || !n->sweep || !d.forced_workload.empty()) return;
  const MemoryLevers measured = memory_levers(*n->sweep);
  for (LeverRung& r : d.levers->rungs) {
    if (r.levers != measured) continue;
    r.longest[1] = d.new_longest;
    r.longest[1].how = fmt::format("its own sweep: {}", d.new_longest.how);
  }
}

// Each file of `s` that says it is no measurement, in its own words under its own name (the set's
// where, when no file is named).
void add_not_measured_lines(UpgradeDecision& d, const MeasurementSet& s) {
  for (const auto& [path, p] : s.not_measured) d.provenance_notes.push_back(not_measured_line(path, p));
  if (s.not_measured.empty() && !s.provenance.measured()) d.provenance_notes.push_back(not_measured_line(s.where, s.provenance));
}

// The verdict of the training steps measured on both GPUs, length by length.
void training_verdict(UpgradeDecision& d, const LengthsByCost& l, const std::string& ng);

// Each GPU's longest sequence beside its name, the old GPU's first.
std::array<std::pair<const LongestSequence*, const std::string*>, 2> longest_by_gpu(const UpgradeDecision& d) {
  return {{{&d.old_longest, &d.old_gpu}, {&d.new_longest, &d.new_gpu}}};
}

// --need-seqlen's verdict, where the length decides: one new GPU holds it and one old GPU does
// not (nor any lever measured on it), UPGRADE FOR CAPABILITY; the mirror, DO NOT UPGRADE. A GPU
// that holds it only at one sequence per step (a batch above one measured) reaches it with
// gradient accumulation: said in the reasons, and the line then speaks at one sequence per step.
// Either rests on both GPUs' answers: where one is not known (one length measured, --find-max
// unsettled there), or rests on a memory fit carried far past its lengths, MEASURE MORE, naming
// it. False where the length decides nothing.
bool length_gate(UpgradeDecision& d, const UpgradeOptions& opt, const std::string& ng) {
  using Fit = LongestSequence::Fit;
  const int64_t need = *opt.need_seqlen;
  if (!d.old_longest.tokens && d.old_longest.how.empty() && !d.new_longest.tokens && d.new_longest.how.empty()) {
    return false;  // no training run on either GPU: nothing says what fits
  }
  const auto measure_more = [&](const std::string& why) {
    d.verdict = UpgradeVerdict::measure_more;
    d.capability_unsure = true;
    d.line = "MEASURE MORE: " + why;
    return true;
  };
  const LeverRung* lever = d.levers ? d.levers->first_reaching(0, need) : nullptr;
  struct Answer {
    const LongestSequence* longest;
    const std::string* gpu;
    Fit fit;
    bool one_per_step = false;  // holds it only at one sequence per step
  };
  std::array<Answer, 2> answers{{{&d.old_longest, &d.old_gpu, d.old_longest.holds(need)},
                                 {&d.new_longest, &ng, d.new_longest.holds(need)}}};
  for (Answer& a : answers) {
    const std::optional<int64_t> one = a.fit == Fit::no ? a.longest->one_per_step(need) : std::nullopt;
    if (!one) continue;
    if (const auto guess = a.longest->one_per_step_guess()) {
      return measure_more(fmt::format("whether one {} holds {} tokens per sequence at one sequence per step rests on "
                                      "{}", *a.gpu, need, *guess));
    }
    a.fit = Fit::yes, a.one_per_step = true;
    d.reasons.push_back(fmt::format("Memory: the {} holds {} tokens per sequence at one sequence per step (its memory "
                                    "fit there: {}), where the runs measured batch {} ({} there): with gradient "
                                    "accumulation the global batch stays, at a step-time cost not measured here{}.",
                                    *a.gpu, need, *one, a.longest->batch, a.longest->held(),
                                    &a == &answers[0] ? "; not a capability gap" : ""));
  }
  Answer& old_answer = answers[0];
  Answer& new_answer = answers[1];
  // Not known on a GPU whose answer could decide: what to measure.
  for (const Answer& a : answers) {
    if (a.fit != Fit::unknown || (&a == &old_answer && lever)) continue;
    return measure_more(fmt::format("whether {} tokens per sequence fit one {} is not known: {}; `sweep --seqlens {}` on "
                                    "it measures it", need, *a.gpu,
                                    a.longest->how.empty() ? "no training step of it was measured"
                                                           : a.longest->unknown_why(need),
                                    need));
  }
  const bool gained = new_answer.fit == Fit::yes && old_answer.fit == Fit::no && !lever;
  const bool lost = old_answer.fit == Fit::yes && new_answer.fit == Fit::no;
  // The old GPU reaches it only with a lever whose longest sequence is a guess.
  if (new_answer.fit == Fit::yes && old_answer.fit == Fit::no && lever) {
    if (const auto guess = lever->longest[0].guess()) {
      return measure_more(fmt::format("whether the {} reaches {} tokens per sequence with {} rests on that run's longest "
                                      "sequence, {}", d.old_gpu, need, lever->levers.name(), *guess));
    }
  }
  if (!gained && !lost) return false;
  // A fit carried far past its lengths decides nothing; what a GPU ran, or ran out of memory at, does.
  for (const Answer& a : answers) {
    if (!a.longest->rests_on_fit(need) || a.one_per_step) continue;
    if (const auto guess = a.longest->guess()) {
      return measure_more(fmt::format("whether {} tokens per sequence fit rests on the {}'s longest sequence, {}", need,
                                      *a.gpu, *guess));
    }
  }
  // A run of a sharded job measured each GPU's share: what fits is per GPU of that job.
  std::vector<std::string> jobs;
  for (const auto& [longest, gpu] : longest_by_gpu(d)) {
    if (!longest->job.empty()) jobs.push_back(fmt::format("the {} {}", *gpu, longest->job));
  }
  const std::string as_measured = jobs.empty() ? "" : fmt::format(" (as measured: {})", fmt::join(jobs, "; "));
  // What each holds, at one sequence per step where one of them reaches the length only so.
  const bool per_one = old_answer.one_per_step || new_answer.one_per_step;
  const auto held = [&](const LongestSequence& l) {
    return per_one && l.batch > 1 && l.at_batch_one ? fmt::format("{} at most", *l.at_batch_one) : l.held();
  };
  const int64_t batch = d.old_longest.batch;
  const std::string at = per_one     ? " at one sequence per step (gradient accumulation)"
                         : batch > 1 ? fmt::format(" at batch {}", batch)
                                     : "";
  if (gained) {
    d.verdict = UpgradeVerdict::capability;
    d.line = fmt::format("UPGRADE FOR CAPABILITY: {} tokens per sequence fit one {}{} ({}) and not one {} ({}{}){}; {}.",
                         need, ng, at, held(d.new_longest), d.old_gpu, held(d.old_longest),
                         d.levers ? fmt::format(", and no lever measured reaches it: {}", best_lever(*d.levers, 0)) : "",
                         as_measured, jobs.empty() ? "on the old GPU only more GPUs with sharded activations reach it"
                                                   : "at the jobs' sizes and sharding the old GPU does not reach it");
  } else {
    d.verdict = UpgradeVerdict::do_not_upgrade;
    d.line = fmt::format("DO NOT UPGRADE: {} tokens per sequence fit one {}{} ({}) and not one {} ({}){}: the new GPU "
                         "loses what the recipe needs, whatever the speed.", need, d.old_gpu, at, held(d.old_longest),
                         ng, held(d.new_longest), as_measured);
  }
  return true;
}

void decide_verdict(UpgradeDecision& d, const UpgradeOptions& opt) {
  const std::string& ng = d.new_accel ? d.new_accel->id : d.new_gpu;
  // A longest sequence read off a memory fit far past the lengths it measured is a guess: said
  // whatever the verdict.
  for (const auto& [longest, gpu] : longest_by_gpu(d)) {
    if (const auto guess = longest->guess()) d.warnings.push_back(fmt::format("the {}'s longest sequence: {}", *gpu, *guess));
  }
  if (d.levers) {
    for (const LeverRung& r : d.levers->rungs) {
      if (r.levers.count() == 0) continue;  // the base run: the GPUs' own lines above
      for (size_t g = 0; g < r.longest.size() && g < d.levers->gpus.size(); ++g) {
        if (const auto guess = r.longest[g].guess()) {
          d.warnings.push_back(fmt::format("the {}'s longest sequence with {}: {}", d.levers->gpus[g].name,
                                           r.levers.name(), *guess));
        }
      }
    }
  }
  // A length the team needs that neither GPU reaches alone is said, whatever the verdict.
  if (opt.need_seqlen) {
    const int64_t need = *opt.need_seqlen;
    const bool lever = d.levers && (d.levers->first_reaching(0, need) || d.levers->first_reaching(1, need));
    const auto beyond = [&](const LongestSequence& l) {
      return l.holds(need) == LongestSequence::Fit::no && !l.one_per_step(need);
    };
    if (beyond(d.old_longest) && beyond(d.new_longest) && !lever) {
      const auto said = [](const LongestSequence& l) {
        return l.batch > 1 && l.at_batch_one
                   ? fmt::format("{} at batch {}, {} at most at one sequence per step", l.held(), l.batch, *l.at_batch_one)
                   : l.held();
      };
      d.reasons.push_back(fmt::format("Memory: {} tokens per sequence fit neither GPU on its own (the {}: {}; the {}: "
                                      "{}): more GPUs with sharded activations, or levers measured on both "
                                      "(--levers), are what reach it; this decision does not.", need, d.old_gpu,
                                      said(d.old_longest), ng, said(d.new_longest)));
    }
  }
  // A needed dtype the old GPU executes and the new one cannot: the new GPU scores zero there.
  if (!d.specs.lost_dtypes.empty()) {
    d.verdict = UpgradeVerdict::do_not_upgrade;
    d.line = fmt::format("DO NOT UPGRADE: the recipe needs {}, which the {} executes and the {} cannot: the new GPU "
                         "scores zero there, whatever the speed.", fmt::join(dtype_names(d.specs.lost_dtypes), ", "),
                         d.old_gpu, ng);
    return;
  }
  if (!d.specs.missing_dtypes.empty()) {
    d.verdict = UpgradeVerdict::capability;
    d.line = fmt::format("UPGRADE FOR CAPABILITY: the recipe needs {}, which the {} executes and the {} cannot: the old "
                         "GPU scores zero there, whatever the speed.", fmt::join(dtype_names(d.specs.missing_dtypes), ", "),
                         ng, d.old_gpu);
    return;
  }
  if (opt.need_seqlen && length_gate(d, opt, ng)) return;
  if (!d.training) {
    d.verdict = UpgradeVerdict::measure_more;
    d.line = "MEASURE MORE: no training step was measured on both GPUs (run `upgradebench suite` on each): the "
             "micro-benchmarks below bound the speedup, they do not give it.";
    return;
  }
  const LengthsByCost l = by_cost(*d.training);
  training_verdict(d, l, ng);
  // A length only the old GPU runs is lost by upgrading: every verdict line says so (the
  // short-context verdict is made of it).
  if (!l.only_old.empty() && d.verdict != UpgradeVerdict::short_context) {
    d.line += fmt::format(" The {} cannot run {} tokens, which the {} runs.", ng, tokens(l.only_old.front()), d.old_gpu);
  }
}

void training_verdict(UpgradeDecision& d, const LengthsByCost& l, const std::string& ng) {
  const Comparison& c = *d.training;
  if (d.old_accel && d.old_accel == d.new_accel) {
    // Two machines of one model differ run to run by a fraction of a percent that a long run
    // resolves: that is noise here; a difference is an interval wholly beyond the same band.
    // Agreeing within noise is an interval wholly inside the band at every length; one wider
    // than the band that holds 1 says neither.
    bool differ = false, within = true;
    for (const CompareRow& r : c.rows) {
      if (!r.speedup) continue;
      differ = differ || r.speedup->low > 1 + kSameBand || r.speedup->high < 1 - kSameBand;
      within = within && r.speedup->low >= 1 - kSameBand && r.speedup->high <= 1 + kSameBand;
    }
    d.verdict = UpgradeVerdict::same_gpu;
    d.line = differ ? fmt::format("SAME GPU: both are a {}, yet their steps differ ({}): the difference is the "
                                  "machines' clocks, power or software, not the GPU model.", ng, speedup_span(c))
             : within ? fmt::format("SAME GPU: both are a {}, and their steps agree within noise (2%) at every "
                                    "length ({}): nothing to upgrade.", ng, speedup_span(c))
                      : fmt::format("SAME GPU: both are a {}, and their steps agree within noise at every length "
                                    "({}), a noise wider than 2% (a 95% interval of a median past it: more steps would "
                                    "narrow it): nothing to upgrade.", ng, speedup_span(c));
    return;
  }
  if (l.all.empty()) {
    d.verdict = UpgradeVerdict::measure_more;
    d.line = l.only_new.empty() ? "MEASURE MORE: no length ran on both GPUs: give the sweep lengths both can run."
                                : fmt::format("UPGRADE FOR LONG CONTEXT: only the {} fits {} tokens; no length ran on "
                                              "both to compare speed.", ng, tokens(l.only_new.front()));
    if (!l.only_new.empty()) d.verdict = UpgradeVerdict::long_context;
    return;
  }
  if (!c.break_even) {
    d.verdict = UpgradeVerdict::no_prices;
    d.line = fmt::format("NO PRICES: the {} is {} the {}'s speed {} {} tokens; give --price-old and --price-new "
                         "(USD per GPU-hour) for the verdict in $/token.", ng, speedup_span(c), d.old_gpu,
                         l.all.size() == 1 ? "at" : "over", span_text(tokens(l.all.front()), tokens(l.all.back())));
    return;
  }
  const double be = *c.break_even;
  // Cheaper up to some length: every cheaper length below every other one, each other one decided
  // dearer, or one the new GPU cannot run at all (it ran out of memory where the old one did not).
  const std::vector<int64_t>& dearer = l.costlier;
  const bool prefix = !l.cheaper.empty() && l.even.empty() && (!dearer.empty() || !l.only_old.empty()) &&
                      (dearer.empty() || dearer.front() > l.cheaper.back()) &&
                      (l.only_old.empty() || l.only_old.front() > l.cheaper.back());
  if (prefix) {
    d.verdict = UpgradeVerdict::short_context;
    std::vector<std::string> beyond;
    if (!dearer.empty()) beyond.push_back(fmt::format("costs more per token from {} tokens", tokens(dearer.front())));
    if (!l.only_old.empty()) {
      beyond.push_back(fmt::format("cannot run {} tokens, which the {} runs", tokens(l.only_old.front()), d.old_gpu));
    }
    d.line = fmt::format("UPGRADE FOR SHORT CONTEXT ONLY: the {} is cheaper per token up to {} tokens (the whole speedup "
                         "interval above the break-even {:.2f}x){}{}.", ng, tokens(l.cheaper.back()), be,
                         beyond.size() > 1 ? ", " + beyond.front() : "", ", and " + beyond.back());
    return;
  }
  if (l.cheaper.size() == l.all.size()) {
    d.verdict = UpgradeVerdict::upgrade;
    d.line = fmt::format("UPGRADE: the {} is cheaper per token at every length measured ({} tokens): {} the speed "
                         "against a break-even of {:.2f}x (the price ratio).", ng,
                         span_text(tokens(l.all.front()), tokens(l.all.back())), speedup_span(c), be);
    return;
  }
  // Cheaper from some length on: every cheaper length above every other one, and every other one
  // decided dearer (a length below that the noise leaves undecided is measured more first).
  const bool suffix = !l.cheaper.empty() && l.even.empty() && std::all_of(l.all.begin(), l.all.end(), [&](int64_t s) {
    return std::find(l.cheaper.begin(), l.cheaper.end(), s) != l.cheaper.end() || s < l.cheaper.front();
  });
  if (suffix || (l.cheaper.empty() && !l.only_new.empty() && l.even.empty())) {
    const int64_t from = suffix ? l.cheaper.front() : l.only_new.front();
    d.verdict = UpgradeVerdict::long_context;
    d.line = suffix ? fmt::format("UPGRADE FOR LONG CONTEXT ONLY: the {} is cheaper per token from {} tokens on (the "
                                  "whole speedup interval above the break-even {:.2f}x), not below.", ng, tokens(from), be)
                    : fmt::format("UPGRADE FOR LONG CONTEXT ONLY: only the {} fits {} tokens and beyond; below, it "
                                  "costs more per token (break-even {:.2f}x).", ng, tokens(from), be);
    return;
  }
  if (l.cheaper.empty() && l.even.empty()) {
    d.verdict = UpgradeVerdict::do_not_upgrade;
    d.line = fmt::format("DO NOT UPGRADE: the {} costs more per token at every length measured: {} the speed against "
                         "a break-even of {:.2f}x.", ng, speedup_span(c), be);
    return;
  }
  d.verdict = UpgradeVerdict::measure_more;
  if (l.even.empty()) {  // every length decided, cheaper and dearer in no order of length
    d.line = fmt::format("MEASURE MORE: the {} is cheaper per token at {} tokens and costlier at {} tokens, in no order of "
                         "length: measure the lengths your jobs run, on both GPUs.", ng, fmt::join(l.cheaper, ", "),
                         fmt::join(l.costlier, ", "));
    return;
  }
  const int64_t at = l.even.front();
  const CompareRow* r = row_at(c, at);
  if (r->speedup->verdict == Verdict::few_samples) {
    d.line = fmt::format("MEASURE MORE: at {} tokens too few steps were timed for a 95% interval ({:.2f}x against a "
                         "break-even of {:.2f}x): more steps there on both GPUs (sweep --seqlens {} --steps 30) would "
                         "settle it.", tokens(at), r->speedup->ratio, be, at);
    return;
  }
  d.line = fmt::format("MEASURE MORE: at {} tokens the speedup {:.2f}x (interval {:.2f}-{:.2f}) holds the break-even "
                       "{:.2f}x: more steps there on both GPUs (sweep --seqlens {} --steps 30) would settle it.",
                       tokens(at), r->speedup->ratio, r->speedup->low, r->speedup->high, be, at);
}

// `n`: the new GPU's measurements, nullptr where part 2 is predicted.
void check_prices(const UpgradeOptions& opt) {
  for (const auto& [p, name] : {std::pair{opt.price_old, "--price-old"}, std::pair{opt.price_new, "--price-new"}}) {
    if (p && !(*p > 0)) throw UsageError(fmt::format("{} must be a positive price in USD per GPU-hour", name));
  }
  if (opt.price_old.has_value() != opt.price_new.has_value()) {
    throw UsageError("give both prices (--price-old and --price-new) or neither");
  }
}

// Part 1 and the specs' bounds, from the catalog: capability gate, memory, break-even.
void add_catalog_part(UpgradeDecision& d, const UpgradeOptions& opt) {
  if (!d.old_accel || !d.new_accel) return;
  DecideInput in;
  in.from = d.old_accel, in.to = d.new_accel;
  if (d.training) in.model = d.training->model;
  in.need = opt.need;
  in.price_from = opt.price_old, in.price_to = opt.price_new;
  d.specs = decide(in);
}

void add_reasons(UpgradeDecision& d, const MeasurementSet& o, const MeasurementSet* n, const UpgradeOptions& opt) {
  // 1. Capability: dtypes and memory, from the catalog.
  for (const std::string& s : d.specs.reasons) {
    if (s.rfind("Capability:", 0) == 0 || s.rfind("Software:", 0) == 0) {
      d.reasons.push_back(s);
    }
  }
  // 2. Stack match.
  if (!n) {
    d.reasons.push_back("Stack: the prediction carries the old GPU's software to the new one; measure there on the "
                        "same stack to know.");
  } else if (d.stack_differences.empty()) {
    std::vector<std::string> named;  // what both name alike
    for (const char* k : {"upgradebench", "cuda_runtime", "cublaslt", "cudnn", "nccl", "torch"}) {
      const auto it = o.stack.find(k);
      if (it == o.stack.end() || !n->stack.contains(k)) continue;
      named.push_back(component_text(k, it->second));
    }
    d.reasons.push_back(named.empty() ? "Stack: neither set names its software." :
                        fmt::format("Stack: the same software on both ({}).", fmt::join(named, ", ")));
  } else {
    d.reasons.push_back(fmt::format("Stack: it differs ({}): part of any difference is the software.",
                                    fmt::join(d.stack_differences, "; ")));
  }
  if (!d.forced_workload.empty()) {
    d.reasons.push_back(fmt::format("Workload: the training runs differ ({}), compared with --force: their speedups are "
                                    "of two workloads, not of two GPUs alone.", fmt::join(d.forced_workload, "; ")));
  }
  // 3-5. Speedup per length, $/token against the price ratio, wall clock.
  if (d.training) {
    for (const std::string& s : measured_conclusions(*d.training)) d.reasons.push_back(s);
    for (const std::string& s : decision_summary(*d.training).lines) d.reasons.push_back(s);
    if (n) {  // a prediction has no energy of the new GPU
      for (const std::string& s : energy_conclusions(*d.training)) d.reasons.push_back(s);
    }
  }
  // 6. Memory headroom.
  const auto longest = [](const std::string& gpu, const LongestSequence& l) {
    return fmt::format("{} {} ({}{})", gpu, l.lower_bound ? l.cell() : l.tokens ? std::to_string(*l.tokens) : "unknown", l.how,
                       l.guess() ? "; a guess, far past the lengths measured" : "");
  };
  if (o.sweep || (n && n->sweep)) {
    d.reasons.push_back(fmt::format("Memory headroom, the longest sequence on one GPU (of the job measured): {}; {}.", longest(d.old_gpu, d.old_longest),
                                    longest(d.new_gpu, d.new_longest)));
  }
  if (d.levers) lever_reasons(d, opt);
  // 7. The micro-benchmarks against the catalog.
  for (const RatioRow& r : d.ratios) {
    if (!r.measured_ratio) continue;
    d.reasons.push_back(fmt::format("{}: {:.2f}x measured{}.", r.what, *r.measured_ratio,
                                    r.catalog_ratio ? fmt::format(", {:.2f}x {}", *r.catalog_ratio, r.note.substr(8)) : ""));
  }
}

}  // namespace

const char* to_string(UpgradeVerdict v) {
  switch (v) {
    case UpgradeVerdict::upgrade: return "upgrade";
    case UpgradeVerdict::long_context: return "upgrade for long context only";
    case UpgradeVerdict::short_context: return "upgrade for short context only";
    case UpgradeVerdict::capability: return "upgrade for capability";
    case UpgradeVerdict::do_not_upgrade: return "do not upgrade";
    case UpgradeVerdict::measure_more: return "measure more";
    case UpgradeVerdict::same_gpu: return "same GPU";
    case UpgradeVerdict::no_prices: return "no prices";
  }
  return "?";
}

namespace {

// Files given one by one beside a training sweep: a decomposition of another depth, or attention
// of other heads, is not the sweep's workload (a suite's folder refuses them); said.
void warn_parts_of_other_workload(const MeasurementSet& s, std::vector<std::string>& warnings) {
  if (!s.sweep || s.manifest) return;
  const RunLog& r = *s.sweep;
  const auto said = [&](const char* key) {
    const auto it = r.config.find(key);
    return it == r.config.end() ? std::string() : it->second;
  };
  for (const DecompositionLog& d : s.decompositions) {
    // A printout is bench_decompose.py's step of its model at all its layers.
    const bool printout = d.records.empty();
    const std::string layers = printout ? said("config_layers") : (d.header.count("layers") ? d.header.at("layers") : "");
    const bool other_model = printout && r.model && *r.model != kPrintoutModel;
    if (other_model || (r.layers && !layers.empty() && layers != std::to_string(*r.layers))) {
      warnings.push_back(fmt::format("{}: a decomposition of another workload than the training sweep {} ({}): its "
                                     "buckets are not the sweep's step", printable(d.path), printable(r.path),
                                     other_model ? fmt::format("{} vs {}", kPrintoutModel, *r.model)
                                                 : fmt::format("{} layers vs {}", printable(layers), *r.layers)));
    }
  }
  if (s.attention && !said("heads").empty()) {
    const auto& h = s.attention->header;
    const auto heads = h.count("nheads") ? h.at("nheads") : h.count("heads") ? h.at("heads") : std::string();
    if (!heads.empty() && heads != said("heads")) {
      warnings.push_back(fmt::format("{}: attention of {} heads beside a training sweep of {} ({}): not the step's "
                                     "attention", printable(s.attention->path), printable(heads), said("heads"),
                                     printable(r.path)));
    }
  }
}

}  // namespace

UpgradeDecision decide_upgrade(const MeasurementSet& o, const MeasurementSet& n, const Catalog& catalog,
                               const std::filesystem::path& models_dir, const UpgradeOptions& opt) {
  check_prices(opt);
  if (o.manifest && n.manifest) {
    if (const std::string w = o.manifest->workload.differs_from(n.manifest->workload); !w.empty()) {
      throw UsageError(fmt::format("{} and {} measured different workloads ({}, old vs new): run suite with the same "
                                   "options on both", o.where, n.where, w));
    }
  }
  UpgradeDecision d;
  d.old_gpu = o.gpu.empty() ? "old GPU" : o.gpu;
  d.new_gpu = n.gpu.empty() ? "new GPU" : n.gpu;
  d.old_accel = o.gpu.empty() ? nullptr : catalog.try_find(o.gpu);
  d.new_accel = n.gpu.empty() ? nullptr : catalog.try_find(n.gpu);
  d.provenance = weaker(o.provenance, n.provenance);
  d.old_provenance = o.provenance;
  for (const MeasurementSet* s : {&o, &n}) add_not_measured_lines(d, *s);
  d.warnings = o.warnings;
  d.warnings.insert(d.warnings.end(), n.warnings.begin(), n.warnings.end());
  d.old_stack = o.stack, d.new_stack = n.stack;
  d.stack_differences = stack_differences(o, n, d.warnings);
  if (!d.stack_differences.empty() && !opt.force) {
    throw UsageError(fmt::format("the two stacks differ ({}): measure both on one software stack (the guide's first "
                                 "step), or --force to compare them anyway", fmt::join(d.stack_differences, "; ")));
  }
  // A GPU the catalog does not know bounds no figure and has no capabilities: said, and refused
  // where its own machine matched it to an entry the catalog has under another name (an edited
  // name, or a catalog missing the driver's name for it).
  for (const MeasurementSet* s : {&o, &n}) {
    if (s->gpu.empty() || catalog.try_find(s->gpu)) continue;
    if (const Accelerator* as = s->catalog_id.empty() ? nullptr : catalog.try_find(s->catalog_id)) {
      throw WorkError(fmt::format("{}: its GPU is named \"{}\", which the catalog does not know, while its env.json "
                                  "matched it to {}: add the name to {}'s aliases in the catalog, or measure with the "
                                  "name the driver gives", s->where, printable(s->gpu), as->id, as->id));
    }
    d.warnings.push_back(*unknown_gpu_warning(s->gpu, catalog, s->where));
  }
  // What no GPU measures is refused in every part, paired or not: a part of one side alone still
  // shows as a figure (the step's own products, the copy rate, the longest sequence).
  for (const MeasurementSet* s : {&o, &n}) {
    for (const std::optional<MamfLog>* m : {&s->ceiling, &s->step_products}) {
      if (*m) refuse_impossible_ceiling(**m, catalog);
    }
    if (s->attention) refuse_impossible_attention(*s->attention, catalog);
    if (s->bandwidth) refuse_impossible_bandwidth(*s->bandwidth, catalog);
    if (s->sweep) refuse_impossible_run(*s->sweep, catalog, models_dir);
    for (const DecompositionLog& l : s->decompositions) refuse_impossible_decomposition(l, catalog);
  }
  if (o.sweep && n.sweep) {
    CompareOptions co;
    co.price_old = opt.price_old, co.price_new = opt.price_new, co.force = opt.force;
    co.power_usd_per_kwh = opt.power_usd_per_kwh, co.pue = opt.pue;
    d.training = compare_runs(*o.sweep, *n.sweep, catalog, models_dir, co);
    for (const std::string& w : d.training->warnings) {
      if (w.rfind("forced: ", 0) == 0) d.forced_workload.push_back(w.substr(8));
    }
    if (const auto differs = expert_balance_difference(*d.training)) {
      if (!opt.force) {
        throw UsageError(fmt::format("{}: the two runs routed their tokens differently (other weights, tokens or seed), so "
                                     "they did not time the same work; run both with the same, or --force to compare "
                                     "them anyway", *differs));
      }
      d.forced_workload.push_back(*differs);
    }
  }
  if (o.ceiling && n.ceiling) d.ceiling = compare_mamf(*o.ceiling, *n.ceiling, catalog, opt.force);
  if (o.attention && n.attention) d.attention = compare_attention(*o.attention, *n.attention, catalog);
  if (o.nccl && n.nccl) d.nccl = compare_nccl(*o.nccl, *n.nccl, catalog);
  warn_parts_of_other_workload(o, d.warnings);
  warn_parts_of_other_workload(n, d.warnings);
  // Copies timed by other kernels are refused as `compare` refuses them, before the HBM ratio.
  if (o.bandwidth && n.bandwidth) (void)compare_bandwidth(*o.bandwidth, *n.bandwidth, catalog);
  // Attention or collectives of one GPU only have nothing to be set beside: left out, said (the
  // ceiling and HBM rows show the one side measured).
  const auto one_side = [&](const char* what, const auto& a, const auto& b) {
    if (a.has_value() == b.has_value()) return;
    d.warnings.push_back(fmt::format("{} {} measured on the {} GPU only: left out of the comparison", printable(a ? a->path : b->path),
                                     what, a ? "old" : "new"));
  };
  one_side("(attention)", o.attention, n.attention);
  one_side("(collectives)", o.nccl, n.nccl);
  add_decompositions(d, o, n, catalog, models_dir);
  add_ratios(d, o, n);
  if (o.sweep) {
    d.old_longest = longest_sequence(*o.sweep, d.old_accel ? d.old_accel->capacity_gib() : std::nullopt, o.found);
  }
  if (n.sweep) {
    d.new_longest = longest_sequence(*n.sweep, d.new_accel ? d.new_accel->capacity_gib() : std::nullopt, n.found);
  }
  add_levers(d, o, &n, catalog, opt);
  add_catalog_part(d, opt);
  decide_verdict(d, opt);
  add_reasons(d, o, &n, opt);
  return d;
}

UpgradeDecision decide_predicted_upgrade(const MeasurementSet& o, const std::vector<Prediction>& predictions,
                                         const Accelerator& to, const Catalog& catalog,
                                         const std::filesystem::path& models_dir, const UpgradeOptions& opt) {
  check_prices(opt);
  UpgradeDecision d;
  d.old_gpu = o.gpu.empty() ? "old GPU" : o.gpu;
  d.new_gpu = to.name;
  d.old_accel = o.gpu.empty() ? nullptr : catalog.try_find(o.gpu);
  d.new_accel = &to;
  d.old_provenance = o.provenance;
  d.new_predicted = true;
  d.provenance = weaker(o.provenance, Provenance{Origin::predicted, fmt::format(
      "part 2 for the {} predicted from {} (predict, docs/predict.md), not measured", to.name, o.where)});
  add_not_measured_lines(d, o);
  d.provenance_notes.push_back(fmt::format("PREDICTED: {}: part 2 for the {} from the {}'s measurements, not measured "
                                           "(docs/predict.md)", o.where, to.name, d.old_gpu));
  d.warnings = o.warnings;
  d.old_stack = o.stack;
  if (o.sweep) {
    CompareOptions co;
    co.price_old = opt.price_old, co.price_new = opt.price_new, co.force = true, co.old_run_beside_itself = true;
    co.power_usd_per_kwh = opt.power_usd_per_kwh, co.pue = opt.pue;
    // The old run beside itself gives the old side of every row; the new side is the prediction's.
    Comparison c = compare_runs(*o.sweep, *o.sweep, catalog, models_dir, co);
    c.new_run.gpu = to.name;
    c.new_run.provenance = d.provenance.note;
    c.new_gpu = &to;
    c.stack.clear(), c.stack_mismatch = false;
    set_catalog_ratios(c);
    for (CompareRow& r : c.rows) {
      const Prediction* p = nullptr;
      for (const Prediction& x : predictions) {
        if (x.input.seqlen == r.seqlen && x.step_ms && x.speedup) p = &x;
      }
      r.new_side = SideFigures{};
      r.speedup.reset(), r.cost_ratio.reset(), r.wall_clock_ratio.reset(), r.energy_ratio.reset();
      if (r.old_side.status == "oom") {
        r.note = "old cannot run this";
        continue;
      }
      if (!p) {
        r.note = "not predicted";
        continue;
      }
      r.note.clear();
      r.new_side.status = "ok";
      r.new_side.step_ms = p->step_ms, r.new_side.tflops = p->tflops, r.new_side.mfu = p->mfu;
      r.new_side.peak_gib = r.old_side.peak_gib;
      r.new_side.usd_per_mtok = p->usd_per_mtoken_new;
      r.speedup = speedup_in(*p->speedup, p->speedup_low.value_or(*p->speedup), p->speedup_high.value_or(*p->speedup));
      r.wall_clock_ratio = 1 / *p->speedup;
      if (r.old_side.usd_per_mtok && r.new_side.usd_per_mtok) r.cost_ratio = *r.new_side.usd_per_mtok / *r.old_side.usd_per_mtok;
    }
    d.training = std::move(c);
    d.old_longest = longest_sequence(*o.sweep, d.old_accel ? d.old_accel->capacity_gib() : std::nullopt, o.found);
    d.new_longest = longest_sequence(*o.sweep, to.capacity_gib(), std::nullopt, false);
    d.new_longest.how = "the old run's memory fit at this GPU's capacity, PREDICTED";
  }
  add_levers(d, o, nullptr, catalog, opt);
  add_catalog_part(d, opt);
  decide_verdict(d, opt);
  // No sweep to set the steps beside (its part failed or was cut short): what the decompositions
  // predict is said, and what gives the verdict.
  if (!o.sweep && d.verdict == UpgradeVerdict::measure_more && !d.capability_unsure) {
    std::vector<std::string> said;
    for (const Prediction& p : predictions) {
      if (p.input.seqlen && p.speedup) said.push_back(fmt::format("{:.2f}x at {} tokens", *p.speedup, *p.input.seqlen));
    }
    if (!said.empty()) {
      d.line = fmt::format("MEASURE MORE: {} holds no training sweep to set the predicted steps beside, so no verdict in "
                           "$/token; its decompositions predict the {}'s speedup over the {}: {} (`upgradebench "
                           "predict`); run its sweep again (suite --resume) for the verdict.", o.where, to.id, d.old_gpu,
                           fmt::join(said, ", "));
    }
  }
  // A predicted interval is the model's uncertainty, not noise: more steps do not settle it, a
  // measurement on the new GPU does. Name the one the prediction says narrows it most.
  if (d.verdict == UpgradeVerdict::measure_more && !d.capability_unsure && d.training && d.training->break_even) {
    for (const CompareRow& r : d.training->rows) {
      if (!r.speedup || r.speedup->low > *d.training->break_even || r.speedup->high < *d.training->break_even) continue;
      for (const Prediction& p : predictions) {
        if (p.input.seqlen != r.seqlen || !p.next) continue;
        d.line = fmt::format("MEASURE MORE: at {} tokens the predicted speedup {:.2f}x (interval {:.2f}-{:.2f}) holds the "
                             "break-even {:.2f}x: measure on the {} first {} ({}), which would narrow it to "
                             "{:.2f}-{:.2f}x; then run the suite there and decide on both folders.",
                             r.seqlen, r.speedup->ratio, r.speedup->low, r.speedup->high, *d.training->break_even,
                             to.id, p.next->what, p.next->command, p.next->speedup_low, p.next->speedup_high);
        break;
      }
      break;
    }
  }
  add_reasons(d, o, nullptr, opt);
  return d;
}

}  // namespace ub
