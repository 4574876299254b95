// Statistics over timing samples, and the comparison of two sets of them.
//
// Summary: Welford mean/variance (one pass, numerically stable), median and quartiles, and a
// distribution-free 95% confidence interval of the median from order statistics (the ranks
// n/2 -+ 1.96*sqrt(n)/2, the normal approximation to the binomial), so an interval needs no
// assumption that timings are normal (they are not: they have a floor and a long right tail).
// relative_noise = half the median interval over the median: what stopping rules compare with
// their target (nvbench stops at 0.5%).
#pragma once

#include <cstddef>
#include <vector>

namespace ub {

class Welford {
 public:
  void add(double x);
  size_t count() const { return n_; }
  double mean() const { return mean_; }
  double variance() const { return n_ > 1 ? m2_ / static_cast<double>(n_ - 1) : 0.0; }
  double stddev() const;

 private:
  size_t n_ = 0;
  double mean_ = 0.0, m2_ = 0.0;
};

struct Summary {
  size_t n = 0;
  double mean = 0, stddev = 0, min = 0, max = 0;
  double median = 0, q1 = 0, q3 = 0;
  double median_low = 0, median_high = 0;  // 95% interval of the median

  double cv() const { return mean != 0 ? stddev / mean : 0; }
  double relative_noise() const { return median != 0 ? (median_high - median_low) / 2 / median : 0; }
};

// Linear-interpolated quantile of sorted data, q in [0, 1].
double quantile_sorted(const std::vector<double>& sorted, double q);

// Throws std::invalid_argument on an empty sample or a NaN.
Summary summarize(std::vector<double> samples);

}  // namespace ub
