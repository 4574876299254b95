// Statistics against hand-computed values.
#include "base/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace ub {
namespace {

TEST(Statistics, WelfordMatchesTheTextbook) {
  Welford w;
  for (double x : {2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}) w.add(x);
  EXPECT_DOUBLE_EQ(w.mean(), 5.0);
  EXPECT_DOUBLE_EQ(w.variance(), 32.0 / 7.0);  // sample variance
}

TEST(Statistics, SummaryOfOneToNine) {
  const Summary s = summarize({9, 1, 8, 2, 7, 3, 6, 4, 5});
  EXPECT_EQ(s.n, 9u);
  EXPECT_DOUBLE_EQ(s.median, 5);
  EXPECT_DOUBLE_EQ(s.q1, 3);
  EXPECT_DOUBLE_EQ(s.q3, 7);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 9);
  // n = 9: ranks floor(4.5 - 2.94) = 1 and ceil(5.5 + 2.94) = 9 -> [1, 9]
  EXPECT_DOUBLE_EQ(s.median_low, 1);
  EXPECT_DOUBLE_EQ(s.median_high, 9);
}

TEST(Statistics, MedianIntervalNarrowsWithSamples) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  const Summary s = summarize(v);
  // n = 100: ranks floor(50 - 9.8) = 40 and ceil(51 + 9.8) = 61
  EXPECT_DOUBLE_EQ(s.median_low, 40);
  EXPECT_DOUBLE_EQ(s.median_high, 61);
  EXPECT_NEAR(s.relative_noise(), 10.5 / 50.5, 1e-12);
  EXPECT_NEAR(s.cv(), s.stddev / 50.5, 1e-12);
}

TEST(Statistics, IdenticalSamplesHaveNoNoise) {
  const Summary s = summarize({3, 3, 3, 3, 3, 3, 3, 3, 3, 3});
  EXPECT_DOUBLE_EQ(s.relative_noise(), 0);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
}

TEST(Statistics, EmptyAndNanAreRejected) {
  EXPECT_THROW(summarize({}), std::invalid_argument);
  EXPECT_THROW(summarize({1.0, std::nan("")}), std::invalid_argument);
}

}  // namespace
}  // namespace ub
