// The decision in plain words; see decision_summary.hpp.
#include "analysis/decision_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/text.hpp"

namespace ub {

namespace {

std::string tokens(int64_t s) { return s % 1024 == 0 ? fmt::format("{}k", s / 1024) : fmt::format("{}", s); }

// "4k", "4k-16k" or "4k, 16k-32k": runs of neighbouring measured lengths.
std::string ranges(const std::vector<int64_t>& all, const std::vector<int64_t>& picked) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < picked.size();) {
    size_t j = i;
    const auto pos = [&](int64_t s) { return std::find(all.begin(), all.end(), s) - all.begin(); };
    while (j + 1 < picked.size() && pos(picked[j + 1]) == pos(picked[j]) + 1) ++j;
    parts.push_back(i == j ? tokens(picked[i]) : tokens(picked[i]) + "-" + tokens(picked[j]));
    i = j + 1;
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

DecisionSummary decision_summary(const Comparison& c) {
  DecisionSummary d;
  const std::string old_gpu = c.old_gpu ? c.old_gpu->id : c.old_run.gpu, new_gpu = c.new_gpu ? c.new_gpu->id : c.new_run.gpu;
  std::vector<int64_t> all, cheaper, costlier, even, few_steps, only_new, only_old;
  double worst_cost = 0, best_cost = 1e300;
  std::optional<double> low_gain, high_gain;
  for (const CompareRow& r : c.rows) {
    all.push_back(r.seqlen);
    if (r.note == "old cannot run this") only_new.push_back(r.seqlen);
    if (r.note == "new cannot run this") only_old.push_back(r.seqlen);
    if (!r.speedup) continue;
    low_gain = std::min(low_gain.value_or(1e300), r.speedup->ratio);
    high_gain = std::max(high_gain.value_or(0.0), r.speedup->ratio);
    if (!c.break_even) continue;
    if (r.speedup->verdict == Verdict::few_samples) {  // no interval to hold against the break-even
      few_steps.push_back(r.seqlen);
    } else if (r.speedup->low > *c.break_even) {
      cheaper.push_back(r.seqlen);
      if (r.cost_ratio) best_cost = std::min(best_cost, *r.cost_ratio);
    } else if (r.speedup->high < *c.break_even) {
      costlier.push_back(r.seqlen);
      if (r.cost_ratio) worst_cost = std::max(worst_cost, *r.cost_ratio);
    } else {
      even.push_back(r.seqlen);
    }
  }
  if (c.break_even) {
    if (!cheaper.empty()) {
      d.lines.push_back(fmt::format("The {} is CHEAPER per token at {} tokens{}: the whole speedup interval is above "
                                    "the break-even {:.2f}x (the price ratio).", new_gpu, ranges(all, cheaper),
                                    best_cost < 1e300 ? fmt::format(" (down to {}% of the {}'s cost)", 100 * best_cost < 10 ? fmt::format("{:.2g}", 100 * best_cost) : fmt::format("{:.0f}", 100 * best_cost), old_gpu) : "",
                                    *c.break_even));
    }
    if (!costlier.empty()) {
      d.lines.push_back(fmt::format("It COSTS MORE per token at {} tokens{}.", ranges(all, costlier),
                                    worst_cost > 0 ? fmt::format(" (up to {:.0f}% more)", 100 * (worst_cost - 1)) : ""));
    }
    if (!even.empty()) {
      d.lines.push_back(fmt::format("At {} tokens the break-even is inside the speedup's interval: no cost verdict.",
                                    ranges(all, even)));
    }
    if (!few_steps.empty()) {
      d.lines.push_back(fmt::format("At {} tokens too few steps were timed for a 95% interval: no cost verdict.",
                                    ranges(all, few_steps)));
    }
    if (cheaper.empty() && costlier.empty() && even.empty() && few_steps.empty()) {
      d.lines.push_back("No length was measured on both GPUs: no cost verdict.");
    }
    // Where the speedup crosses the break-even between two neighbouring lengths measured on both,
    // each with its whole interval on its own side: medians that straddle it inside their noise
    // cross nothing anyone could find again.
    const CompareRow* prev = nullptr;
    const auto above = [&](const CompareRow& r) { return r.speedup->low > *c.break_even; };
    const auto below = [&](const CompareRow& r) { return r.speedup->high < *c.break_even; };
    for (const CompareRow& r : c.rows) {
      if (!r.speedup || r.speedup->verdict == Verdict::few_samples) continue;
      if (prev && ((above(*prev) && below(r)) || (below(*prev) && above(r)))) {
        const double a = std::log(static_cast<double>(prev->seqlen)), b = std::log(static_cast<double>(r.seqlen));
        const double t = (*c.break_even - prev->speedup->ratio) / (r.speedup->ratio - prev->speedup->ratio);
        d.crossover_seqlen = std::exp(a + t * (b - a));
        d.lines.push_back(fmt::format("The speedup crosses the break-even near {:.0f} tokens (interpolated between the "
                                      "measured {} and {}).", *d.crossover_seqlen, tokens(prev->seqlen),
                                      tokens(r.seqlen)));
      }
      prev = &r;
    }
  }
  if (!only_new.empty()) {
    d.lines.push_back(fmt::format("Only the {} fits {} tokens (the {} ran out of memory).", new_gpu, ranges(all, only_new),
                                  old_gpu));
  }
  if (!only_old.empty()) {
    d.lines.push_back(fmt::format("Only the {} fits {} tokens.", old_gpu, ranges(all, only_old)));
  }
  if (low_gain) {
    d.lines.push_back(fmt::format("Wall clock: the same work takes {}% of the time on the {} ({}x faster).",
                                  span_text(fmt::format("{:.0f}", 100 / *high_gain), fmt::format("{:.0f}", 100 / *low_gain)),
                                  new_gpu, span_text(fmt::format("{:.2f}", *low_gain), fmt::format("{:.2f}", *high_gain))));
  }
  std::vector<std::string> diffs;
  for (const StackDifference& s : c.stack) {
    if (!s.intended) diffs.push_back(fmt::format("{} {} vs {}", s.key, s.old_value, s.new_value));
  }
  if (!diffs.empty()) {
    d.stack_alert = fmt::format("SOFTWARE DIFFERS between the runs ({}): every verdict here carries that difference, "
                                "not the GPUs' alone.", fmt::join(diffs, "; "));
  }
  return d;
}

}  // namespace ub
