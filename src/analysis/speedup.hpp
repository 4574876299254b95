// A speedup with its uncertainty, and what can honestly be said about it (nvbench's compare in
// spirit: never a bare ratio).
//
// From the per-step times of two runs: ratio = median(old) / median(new); its interval divides
// the ends of the two medians' 95% intervals crosswise, [old_low / new_high, old_high / new_low]
// (conservative: both intervals at their worst). Verdict:
//   FASTER     the whole interval is above 1
//   SLOWER     the whole interval is below 1
//   SAME       the interval contains 1 and lies within 1 -+ `same_band` (2% by default)
//   AMBIGUOUS  the interval contains 1 but is too wide to call it the same
//   FEW STEPS  either side has fewer than kSamplesFor95 samples: no order-statistic interval of the
//              median reaches 95% there (the widest, min to max, covers 1 - 2 * 0.5^n: 94% at 5,
//              0% at 1), so the range shown is the samples' and no verdict is drawn from it
#pragma once

#include <cstddef>
#include <string_view>

#include "base/statistics.hpp"

namespace ub {

enum class Verdict { faster, slower, same, ambiguous, few_samples };
std::string_view to_string(Verdict v);

struct Speedup {
  double ratio = 1, low = 1, high = 1;
  Verdict verdict = Verdict::ambiguous;
};

inline constexpr double kSameBand = 0.02;  // what counts as the same speed: within 2%
inline constexpr size_t kSamplesFor95 = 6;  // the fewest samples whose min..max holds the median at 95%
Speedup speedup_of(const Summary& old_time, const Summary& new_time, double same_band = kSameBand);
// A speedup given with its interval (a prediction's), judged by the same rule.
Speedup speedup_in(double ratio, double low, double high, double same_band = kSameBand);

}  // namespace ub
