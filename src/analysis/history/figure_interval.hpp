// A figure with its 95% interval, and the two operations trends and fleets need on them: several
// runs' figures pooled into one, and the change from one figure to another.
//
// Pooling: the median of the runs' medians, with the interval from the lowest low to the highest
// high (conservative: a group is no surer than its least sure run). Change: new / old - 1, its
// interval divided crosswise [new_low / old_high, new_high / old_low] - 1, as speedups are
// (analysis/speedup.hpp): significant when the interval excludes zero.
#pragma once

#include <cstddef>
#include <vector>

namespace ub {

struct Estimate {
  double median = 0, low = 0, high = 0;
  size_t n = 0;  // samples (a pooled figure: the runs' samples together)
};

struct Change {
  double change = 0, low = 0, high = 0;  // fractions: +0.16 is +16%
  bool significant() const { return low > 0 || high < 0; }
};

// Throws std::invalid_argument on an empty list.
Estimate pooled(const std::vector<Estimate>& runs);
Change change_between(const Estimate& from, const Estimate& to);

}  // namespace ub
