// The longest sequence a GPU holds; see memory_headroom.hpp.
#include "analysis/memory_headroom.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "facts/memfit.hpp"

namespace ub {

namespace {

constexpr int64_t kRounding = 1024;  // a capped length is said to the kilo-token below the failure

}  // namespace

std::string sharded_job(const RunLog& run) {
  const RunSharding s = sharding_of(run);
  const int64_t world = s.world_size;
  std::vector<std::string> how;
  if (s.zero_stage != 0) how.push_back(fmt::format("ZeRO-{}", s.zero_stage));
  if (s.offload_optimizer) how.push_back("the optimizer offloaded");
  if (world > 1) {
    return fmt::format("per GPU of a job of {} GPUs{}", world, how.empty() ? "" : fmt::format(" ({})", fmt::join(how, ", ")));
  }
  return how.empty() ? "" : fmt::format("on one GPU with {}", fmt::join(how, ", "));
}

namespace {

// longest_sequence, before the job it is per GPU of is said.
LongestSequence longest_sequence_alone(const RunLog& run, std::optional<double> capacity_gib,
                                       const std::optional<SweepMax>& found, bool same_gpu, bool runs_hold) {
  LongestSequence l;
  l.own_gpu = same_gpu;
  l.runs_hold = same_gpu && runs_hold;
  l.batch = run.batch;
  for (const RunPoint& p : run.points) {
    if (p.status == PointStatus::ok) l.measured_longest = std::max(l.measured_longest, p.seqlen);
  }
  // A failure below a length that ran bounds nothing the run did not pass (the reader warns of it).
  for (const RunPoint& p : run.points) {
    if (p.status == PointStatus::oom && p.seqlen > l.measured_longest) {
      l.out_of_memory_at = std::min(l.out_of_memory_at.value_or(p.seqlen), p.seqlen);
    }
  }
  const auto points = memory_points(run);
  const bool searched = found && found->longest_fit && same_gpu;
  std::optional<MemoryFit> fit;
  if (points.size() >= 2 && capacity_gib) {
    try {
      fit = fit_memory(points, run.path);
    } catch (const WorkError&) {
      if (!searched) throw;  // the search's answer needs no fit
    }
  }
  // One sequence per step holds what a step of `batch` held in tokens: the fit read at batch one,
  // below the tokens of a step measured out of memory (a --find-max failure or a sweep's).
  if (fit && run.batch > 1) {
    l.at_batch_one = fit->max_seqlen(*capacity_gib, 1);
    std::optional<int64_t> failed_tokens;
    if (same_gpu && l.out_of_memory_at) failed_tokens = run.batch * *l.out_of_memory_at;
    if (searched && found->shortest_out_of_memory) {
      failed_tokens = std::min(failed_tokens.value_or(INT64_MAX), run.batch * *found->shortest_out_of_memory);
    }
    if (l.at_batch_one && failed_tokens && *l.at_batch_one >= *failed_tokens) {
      l.at_batch_one = std::max<int64_t>(1, (*failed_tokens - 1) / kRounding * kRounding);
    }
  }
  if (searched) {
    l.tokens = *found->longest_fit, l.measured = true;
    const std::optional<int64_t>& failed = found->shortest_out_of_memory;
    l.lower_bound = !failed || *failed - *l.tokens > std::max<int64_t>(found->granularity, 1);
    if (l.lower_bound) l.unsettled_below = failed;
    l.how = !l.lower_bound ? "measured (sweep --find-max)"
            : failed       ? fmt::format("measured (sweep --find-max) to fit; the search did not settle the boundary "
                                         "below {} (out of memory)", *failed)
                           : "measured (sweep --find-max) to fit; the search found no longer length out of memory (its "
                             "--find-max-ceiling, or a failure that was not memory)";
    return l;
  }
  if (fit) l.fitted = fit->max_seqlen(*capacity_gib, run.batch);
  l.tokens = l.fitted;
  l.how = l.fitted            ? fmt::format("fitted from {} lengths", points.size())
          : points.size() < 2 ? "unknown (fewer than two lengths with memory)"
          : !capacity_gib     ? "unknown (no usable capacity of this GPU in the catalog to read the fit at)"
                              : "unknown (the fit reaches no length at this capacity)";
  // A fit below a length the run held on this GPU says less than was measured (the run went past
  // the usable capacity the fit is read at): the GPU holds what ran.
  if (l.runs_hold && l.fitted && *l.fitted < l.measured_longest) {
    l.ran_past_fit = true;
    l.tokens = l.measured_longest;
    l.how = fmt::format("{} ran, past the {} the fit holds at the usable capacity (the run used memory the capacity "
                        "leaves free)", l.measured_longest, *l.fitted);
  }
  // A fit above a length measured out of memory is capped below it. Without a fit (no capacity to
  // read it at, fewer than two lengths) the longest is not known: the failure bounds it, it does
  // not measure it.
  if (same_gpu && l.out_of_memory_at && !l.tokens) {
    l.how = fmt::format("{}; below {}, measured out of memory", l.how, *l.out_of_memory_at);
  } else if (same_gpu && l.out_of_memory_at && *l.tokens >= *l.out_of_memory_at) {
    l.capped = true;
    l.tokens = std::max<int64_t>(1, (*l.out_of_memory_at - 1) / kRounding * kRounding);
    l.how = fmt::format("below {}, measured out of memory (the fit alone says {})", *l.out_of_memory_at, *l.fitted);
  }
  return l;
}

}  // namespace

LongestSequence longest_sequence(const RunLog& run, std::optional<double> capacity_gib,
                                 const std::optional<SweepMax>& found, bool same_gpu, bool runs_hold) {
  LongestSequence l = longest_sequence_alone(run, capacity_gib, found, same_gpu, runs_hold);
  l.job = sharded_job(run);
  if (!l.job.empty()) l.how += "; " + l.job;
  if (l.batch > 1) l.how += fmt::format("; at batch {}", l.batch);
  return l;
}

LongestSequence::Fit LongestSequence::holds(int64_t need) const {
  if (own_gpu && runs_hold && measured_longest >= need) return Fit::yes;
  if (own_gpu && out_of_memory_at && need >= *out_of_memory_at) return Fit::no;
  if (!tokens) return Fit::unknown;
  if (*tokens >= need) return Fit::yes;
  if (lower_bound && (!unsettled_below || need < *unsettled_below)) return Fit::unknown;
  return Fit::no;
}

bool LongestSequence::rests_on_fit(int64_t need) const {
  if (own_gpu && measured_longest >= need) return false;
  if (own_gpu && out_of_memory_at && need >= *out_of_memory_at) return false;
  return !measured;
}

std::optional<int64_t> LongestSequence::one_per_step(int64_t need) const {
  if (batch <= 1 || !at_batch_one || *at_batch_one < need) return std::nullopt;
  return at_batch_one;
}

std::optional<std::string> LongestSequence::one_per_step_guess() const {
  const int64_t measured_tokens = batch * measured_longest;
  if (!at_batch_one || measured_tokens <= 0 || *at_batch_one <= kFarPastMeasured * measured_tokens) return std::nullopt;
  return fmt::format("{} tokens at one sequence per step is {:.0f}x the most tokens a step measured ({}): the fitted "
                     "line carried that far is a guess; measure near it (sweep --find-max --batch 1)", *at_batch_one,
                     static_cast<double>(*at_batch_one) / static_cast<double>(measured_tokens), measured_tokens);
}

std::string LongestSequence::held() const {
  if (lower_bound) {
    return unsettled_below ? fmt::format("at least {}, below {} out of memory", *tokens, *unsettled_below)
                           : fmt::format("at least {}", *tokens);
  }
  if (tokens && *tokens >= measured_longest) return fmt::format("{} at most", *tokens);
  if (measured_longest > 0 && own_gpu) return fmt::format("{} ran", measured_longest);
  return out_of_memory_at && own_gpu ? fmt::format("out of memory at {}", *out_of_memory_at) : std::string("unknown");
}

std::string LongestSequence::unknown_why(int64_t need) const {
  if (lower_bound) {
    return unsettled_below ? fmt::format("sweep --find-max found {} fit and did not settle the boundary below {} (out "
                                         "of memory)", *tokens, *unsettled_below)
                           : fmt::format("sweep --find-max found {} fit and no longer length out of memory (its "
                                         "--find-max-ceiling, or a failure that was not memory)", *tokens);
  }
  if (out_of_memory_at && own_gpu) {
    return fmt::format("{} ran, {} ran out of memory, and no fit of its memory says where {} falls", measured_longest,
                       *out_of_memory_at, need);
  }
  return measured_longest > 0 && own_gpu ? fmt::format("the longest length it ran is {}, and {}", measured_longest, how) : how;
}

std::optional<std::string> LongestSequence::guess() const {
  if (measured || capped || !tokens || measured_longest <= 0 || *tokens <= kFarPastMeasured * measured_longest) {
    return std::nullopt;
  }
  return fmt::format("{} tokens is {:.0f}x the longest length measured ({}): the fitted line carried that far is a "
                     "guess; measure near it (sweep --find-max)", *tokens,
                     static_cast<double>(*tokens) / static_cast<double>(measured_longest), measured_longest);
}

std::string LongestSequence::cell(const char* none) const {
  if (!tokens) return none;
  if (lower_bound) {
    return unsettled_below ? fmt::format("at least {} (found; below {} unsettled)", *tokens, *unsettled_below)
                           : fmt::format("at least {} (found; none longer tried)", *tokens);
  }
  if (measured) return fmt::format("{} (found)", *tokens);
  if (ran_past_fit) return fmt::format("{} (ran; the fit says {})", *tokens, *fitted);
  if (capped) return fmt::format("{} (capped: out of memory)", *tokens);
  if (guess()) {
    return fmt::format("{} (a guess: {:.0f}x the longest measured)", *tokens,
                       static_cast<double>(*tokens) / static_cast<double>(measured_longest));
  }
  return std::to_string(*tokens);
}

}  // namespace ub
