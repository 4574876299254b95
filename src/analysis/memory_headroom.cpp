// The longest sequence a GPU holds; see memory_headroom.hpp.
#include "analysis/memory_headroom.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

#include "facts/memfit.hpp"

namespace ub {

namespace {

constexpr int64_t kRounding = 1024;  // a capped length is said to the kilo-token below the failure

}  // namespace

std::string sharded_job(const RunLog& run) {
  const auto said = [&](std::initializer_list<const char*> keys) -> std::string {
    for (const char* k : keys) {
      if (const auto it = run.config.find(k); it != run.config.end()) return it->second;
    }
    return "";
  };
  int64_t world = 1;
  try {
    if (const std::string w = said({"world_size"}); !w.empty()) world = std::stoll(w);
  } catch (const std::exception&) {
  }
  const std::string zero = said({"zero_stage", "zero"});
  const std::string offload = said({"offload_optimizer", "offload_optim"});
  std::vector<std::string> how;
  if (!zero.empty() && zero != "0") how.push_back("ZeRO-" + zero);
  if (offload == "true" || offload == "1") how.push_back("the optimizer offloaded");
  if (world > 1) {
    return fmt::format("per GPU of a job of {} GPUs{}", world, how.empty() ? "" : fmt::format(" ({})", fmt::join(how, ", ")));
  }
  return how.empty() ? "" : fmt::format("on one GPU with {}", fmt::join(how, ", "));
}

namespace {

// longest_sequence, before the job it is per GPU of is said.
LongestSequence longest_sequence_alone(const RunLog& run, std::optional<double> capacity_gib, std::optional<int64_t> found,
                                       bool same_gpu) {
  LongestSequence l;
  for (const RunPoint& p : run.points) {
    if (p.status == PointStatus::oom) l.out_of_memory_at = std::min(l.out_of_memory_at.value_or(p.seqlen), p.seqlen);
    if (p.status == PointStatus::ok) l.measured_longest = std::max(l.measured_longest, p.seqlen);
  }
  if (found && same_gpu) {
    l.tokens = *found, l.measured = true;
    l.how = "measured (sweep --find-max)";
    return l;
  }
  const auto points = memory_points(run);
  if (points.size() >= 2 && capacity_gib) l.fitted = fit_memory(points, run.path).max_seqlen(*capacity_gib, run.batch);
  l.tokens = l.fitted;
  l.how = l.fitted            ? fmt::format("fitted from {} lengths", points.size())
          : points.size() < 2 ? "unknown (fewer than two lengths with memory)"
          : !capacity_gib     ? "unknown (no usable capacity of this GPU in the catalog to read the fit at)"
                              : "unknown (the fit reaches no length at this capacity)";
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

LongestSequence longest_sequence(const RunLog& run, std::optional<double> capacity_gib, std::optional<int64_t> found,
                                 bool same_gpu) {
  LongestSequence l = longest_sequence_alone(run, capacity_gib, found, same_gpu);
  l.job = sharded_job(run);
  if (!l.job.empty()) l.how += "; " + l.job;
  return l;
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
  if (measured) return fmt::format("{} (found)", *tokens);
  if (capped) return fmt::format("{} (capped: out of memory)", *tokens);
  if (guess()) {
    return fmt::format("{} (a guess: {:.0f}x the longest measured)", *tokens,
                       static_cast<double>(*tokens) / static_cast<double>(measured_longest));
  }
  return std::to_string(*tokens);
}

}  // namespace ub
