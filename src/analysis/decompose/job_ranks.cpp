// One job's ranks in a folder of traces; see job_ranks.hpp.
#include "analysis/decompose/job_ranks.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "base/error.hpp"
#include "base/text.hpp"

namespace ub::trace {

void JobRanks::add(const TraceDecomposition& d, const std::string& file) {
  if (!d.world_size || !d.rank) unranked_.push_back(file);
  if (!d.world_size) return;
  if (world_ && world_->first != *d.world_size) {
    throw UsageError(fmt::format("{}: its distributedInfo says a job of {} ranks, {} a job of {}: a folder holds one "
                                 "job's traces; give each job's traces in a folder of its own", printable(file),
                                 *d.world_size, printable(world_->second), world_->first));
  }
  if (!world_) world_.emplace(*d.world_size, file);
  if (!d.rank) return;
  if (const auto [it, added] = ranks_.emplace(*d.rank, file); !added) {
    throw UsageError(fmt::format("{}: its distributedInfo says rank {} of {}, as {} does: two jobs' traces, or one "
                                 "trace written twice; give each rank's trace of one job once", printable(file),
                                 *d.rank, *d.world_size, printable(it->second)));
  }
}

std::optional<std::string> JobRanks::missing(const std::string& folder) const {
  if (!ranks_.empty() && !unranked_.empty()) {
    return fmt::format("{} in {} say{} no rank, where {} other{} do: the folder may mix two jobs' traces; put each "
                       "job's traces in a folder of its own", printable(fmt::format("{}", fmt::join(unranked_, ", "))),
                       printable(folder), unranked_.size() == 1 ? "s" : "", ranks_.size(), ranks_.size() == 1 ? "" : "s");
  }
  if (!world_ || ranks_.empty() || static_cast<int64_t>(ranks_.size()) == world_->first) return std::nullopt;
  std::vector<std::string> absent;
  for (int64_t r = 0; r < world_->first && absent.size() < 8; ++r) {
    if (!ranks_.count(r)) absent.push_back(std::to_string(r));
  }
  const int64_t count = world_->first - static_cast<int64_t>(ranks_.size());
  return fmt::format("{} of the job's {} ranks {} no trace in {} (rank {}{}): the decompositions are of the ranks "
                     "given; add their traces for the whole job", count, world_->first, count == 1 ? "has" : "have",
                     printable(folder), fmt::join(absent, ", "), count > static_cast<int64_t>(absent.size()) ? ", ..." : "");
}

}  // namespace ub::trace
