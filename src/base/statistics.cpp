// Statistics; the methods are stated in statistics.hpp.
#include "base/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ub {

void Welford::add(double x) {
  ++n_;
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (x - mean_);
}

double Welford::stddev() const { return std::sqrt(variance()); }

double quantile_sorted(const std::vector<double>& s, double q) {
  if (s.empty()) throw std::invalid_argument("quantile of an empty sample");
  const double pos = q * static_cast<double>(s.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (pos - static_cast<double>(lo)) * (s[hi] - s[lo]);
}

Summary summarize(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("summary of an empty sample");
  Welford w;
  for (double x : samples) {
    if (std::isnan(x)) throw std::invalid_argument("NaN in a sample");
    w.add(x);
  }
  std::sort(samples.begin(), samples.end());
  Summary s;
  s.n = samples.size();
  s.mean = w.mean();
  s.stddev = w.stddev();
  s.min = samples.front();
  s.max = samples.back();
  s.median = quantile_sorted(samples, 0.5);
  s.q1 = quantile_sorted(samples, 0.25);
  s.q3 = quantile_sorted(samples, 0.75);
  // Order-statistic interval of the median (1-based ranks j..k), clamped to the sample.
  const double n = static_cast<double>(s.n);
  const double half = 1.96 * std::sqrt(n) / 2.0;
  const long j = static_cast<long>(std::floor(n / 2.0 - half));
  const long k = static_cast<long>(std::ceil(n / 2.0 + 1.0 + half));
  const size_t lo = static_cast<size_t>(std::clamp(j, 1L, static_cast<long>(s.n))) - 1;
  const size_t hi = static_cast<size_t>(std::clamp(k, 1L, static_cast<long>(s.n))) - 1;
  s.median_low = samples[lo];
  s.median_high = samples[hi];
  return s;
}

}  // namespace ub
