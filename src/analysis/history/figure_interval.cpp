// Pooling figures and the change between two; see figure_interval.hpp.
#include "analysis/history/figure_interval.hpp"

#include <algorithm>
#include <stdexcept>

#include "base/statistics.hpp"

namespace ub {

Estimate pooled(const std::vector<Estimate>& runs) {
  if (runs.empty()) throw std::invalid_argument("pooled: no figure");
  if (runs.size() == 1) return runs.front();
  std::vector<double> medians;
  Estimate f{0, runs.front().low, runs.front().high, 0};
  for (const Estimate& r : runs) {
    medians.push_back(r.median);
    f.low = std::min(f.low, r.low);
    f.high = std::max(f.high, r.high);
    f.n += r.n;
  }
  std::sort(medians.begin(), medians.end());
  f.median = quantile_sorted(medians, 0.5);
  return f;
}

Change change_between(const Estimate& from, const Estimate& to) {
  Change c;
  c.change = to.median / from.median - 1;
  c.low = from.high > 0 ? to.low / from.high - 1 : c.change;
  c.high = from.low > 0 ? to.high / from.low - 1 : c.change;
  return c;
}

}  // namespace ub
