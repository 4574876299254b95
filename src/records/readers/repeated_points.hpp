// One rule for a point measured twice in one file, in every reader: the later measurement is
// kept and the warnings say so, naming where each stands. A file gets a point twice when a run is
// re-run into the same log (benchmark.py's run_sweep.sh, our --out appends) or a sweep retries a
// length that stopped short; the later one is the one its author meant.
//
// A file holds at most kMaxPoints points (tens in a real log, a few thousand in a collective
// sweep): past that it is not a log upgradebench reads, and the readers stay bounded in memory
// and time (the search for an earlier point is linear).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace ub {

inline constexpr size_t kMaxPoints = 16384;
inline constexpr size_t kNamedWarnings = 64;  // a file's warnings past which a point measured again is not named

// Adds `point` to `points`, first removing an earlier one for which `same(earlier, point)` holds
// (with a warning: "<where>: <what> measured again (<before>): the later one is kept").
template <class Point, class Same, class Where>
void keep_later(std::vector<Point>& points, Point point, Same same, Where before, const std::string& where,
                const std::string& what, std::vector<std::string>& warnings) {
  const auto it = std::find_if(points.begin(), points.end(), [&](const Point& p) { return same(p, point); });
  if (it != points.end()) {
    // A file of a million copies of one point says so in bounded memory: named while the file's
    // warnings are few, then once more for the rest.
    if (warnings.size() < kNamedWarnings) {
      warnings.push_back(fmt::format("{}: {} measured again ({}): the later one is kept", where, what, before(*it)));
    } else if (warnings.size() == kNamedWarnings) {
      warnings.push_back(fmt::format("{}: more points measured again from here on: the later of each kept, not named", where));
    }
    points.erase(it);
  } else if (points.size() >= kMaxPoints) {
    throw WorkError(fmt::format("{}: more than {} points in one file: not a log upgradebench reads", where, kMaxPoints));
  }
  points.push_back(std::move(point));
}

}  // namespace ub
