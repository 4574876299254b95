// Reading sweep --find-max's result; see sweep_max.hpp.
#include "records/sweep_max.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.hpp"
#include "records/fields.hpp"
#include "records/record_file.hpp"

namespace ub {

std::optional<SweepMax> read_sweep_max(const LineSource& t, const RunLog& sweep, std::vector<std::string>& warnings) {
  std::optional<SweepMax> s;
  std::string where;
  size_t records = 0;
  std::vector<std::string> others;  // the other records' lines: the run's reader has said those
  for_each_record(t, [&](const RecordLine& r) {
    if (r.type != "sweep_max") return;
    const Fields f(r.json, r.where);
    s = SweepMax{f.optional_count("longest_fit"), f.optional_count("shortest_out_of_memory"),
                 f.optional_count("granularity").value_or(kFindMaxGranularity)};
    if (s->granularity == 0) {
      throw WorkError(fmt::format("{}: sweep --find-max's result: a granularity of 0 tokens: a search steps by a "
                                  "positive length", r.where));
    }
    where = r.where, ++records;
  }, others);
  if (!s) return s;
  if (records > 1) warnings.push_back(fmt::format("{}: {} results of sweep --find-max: the last one's is used", where, records));
  const auto refuse = [&](const std::string& why) {
    return WorkError(fmt::format("{}: sweep --find-max's result {}: not what the sweep measured", where, why));
  };
  if (!s->longest_fit && !s->shortest_out_of_memory) throw refuse("names no length that fits and none that does not");
  int64_t longest_ran = 0, shortest_out = 0;
  bool fit_ran = false;
  for (const RunPoint& p : sweep.points) {
    if (p.status == PointStatus::oom) shortest_out = shortest_out == 0 ? p.seqlen : std::min(shortest_out, p.seqlen);
    if (p.status != PointStatus::ok) continue;
    longest_ran = std::max(longest_ran, p.seqlen);
    fit_ran = fit_ran || (s->longest_fit && p.seqlen == *s->longest_fit);
  }
  if (s->longest_fit && !fit_ran) throw refuse(fmt::format("says {} tokens fit, a length the file holds no run of", *s->longest_fit));
  if (s->longest_fit && longest_ran > *s->longest_fit) {
    throw refuse(fmt::format("says {} tokens are the longest that fit, and {} ran", *s->longest_fit, longest_ran));
  }
  if (s->shortest_out_of_memory && *s->shortest_out_of_memory <= longest_ran) {
    throw refuse(fmt::format("says {} tokens do not fit, and {} ran", *s->shortest_out_of_memory, longest_ran));
  }
  if (s->shortest_out_of_memory && shortest_out > 0 && *s->shortest_out_of_memory > shortest_out) {
    throw refuse(fmt::format("says {} tokens are the shortest that do not fit, and {} ran out of memory",
                             *s->shortest_out_of_memory, shortest_out));
  }
  return s;
}

}  // namespace ub
