// Least-squares memory fit; see memfit.hpp.
#include "facts/memfit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/error.hpp"

namespace ub {

MemoryFit fit_memory(const std::vector<std::pair<double, double>>& pts, const std::string& where) {
  const double n = static_cast<double>(pts.size());
  double sx = 0, sy = 0;
  for (const auto& [x, y] : pts) {
    sx += x;
    sy += y;
  }
  const double mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0, syy = 0;
  for (const auto& [x, y] : pts) {
    sxx += (x - mx) * (x - mx);
    sxy += (x - mx) * (y - my);
    syy += (y - my) * (y - my);
  }
  if (pts.size() < 2 || sxx == 0) {
    throw WorkError(fmt::format("{}: a memory fit needs peak memory at two or more different sequence lengths", where));
  }
  MemoryFit f;
  f.points = pts.size();
  f.slope_gib_per_token = sxy / sxx;
  f.intercept_gib = my - f.slope_gib_per_token * mx;
  f.r2 = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1.0;
  // A training step keeps more the longer its sequence: a fit that falls by more than noise over
  // the measured lengths (half a GiB, or 2% of the memory) is not one workload's memory.
  double lo = pts.front().first, hi = lo;
  for (const auto& [x, y] : pts) lo = std::min(lo, x), hi = std::max(hi, x);
  const double fall = -f.slope_gib_per_token * (hi - lo);
  if (fall > std::max(0.5, 0.02 * std::abs(my))) {
    throw WorkError(fmt::format("{}: peak memory falls as the tokens grow ({:.2f} GiB less from {:.0f} to {:.0f} tokens, "
                                "fitted): a training step's memory does not shrink with its length; are these points of "
                                "one workload?", where, fall, lo, hi));
  }
  return f;
}

std::optional<int64_t> MemoryFit::max_seqlen(double capacity_gib, int64_t batch) const {
  if (!(slope_gib_per_token > 0)) return std::nullopt;
  const double tokens = (capacity_gib - intercept_gib) / slope_gib_per_token;
  if (!(tokens > 0)) return int64_t{0};
  const double per_sequence = std::floor(tokens / static_cast<double>(batch));
  // A near-flat line gives lengths no int64 holds (and a cast out of range is undefined): no limit.
  if (!(per_sequence < 9.0e18)) return std::nullopt;
  return static_cast<int64_t>(per_sequence);
}

}  // namespace ub
