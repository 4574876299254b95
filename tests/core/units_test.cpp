// The rates and fractions every figure is printed from (base/units.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/dates.hpp"
#include "base/units.hpp"

namespace ub {
namespace {

TEST(Units, TflopsAreTeraFlopPerSecondOfTheTimeInMilliseconds) {
  // A 8192^3 bf16 matmul (2*M*N*K FLOPs) in 1.5 ms: 733.0 TFLOPS.
  EXPECT_NEAR(tflops_from(2.0 * 8192 * 8192 * 8192, 1.5), 733.0, 0.05);
  EXPECT_DOUBLE_EQ(to_tflop(3e12), 3.0);
}

TEST(Units, GigabytesPerSecondAreDecimal) {
  // 4 GiB copied (read + written: 8 GiB moved) in 2 ms.
  EXPECT_NEAR(gbps_from(8.0 * (1 << 30), 2.0), 4294.97, 0.01);
}

TEST(Units, ARateOfNoTimeIsZeroNotInfinite) {
  EXPECT_EQ(tflops_from(1e12, 0), 0);
  EXPECT_EQ(gbps_from(1e9, -1), 0);
  EXPECT_EQ(tflops_from(1e12, std::numeric_limits<double>::quiet_NaN()), 0);
}

TEST(Units, AFractionOfAnUnknownOrEmptyCeilingIsNone) {
  EXPECT_DOUBLE_EQ(*fraction_of(403.1, 989.0), 403.1 / 989.0);
  EXPECT_FALSE(fraction_of(403.1, std::nullopt));
  EXPECT_FALSE(fraction_of(std::nullopt, 989.0));
  EXPECT_FALSE(fraction_of(1.0, 0.0));
  EXPECT_FALSE(fraction_of(1.0, std::numeric_limits<double>::quiet_NaN()));
}

// A run's date as the instant in UTC: the offset taken off, across midnight and a month's end,
// fractional seconds dropped, a date without a zone taken as UTC, a text that is no timestamp kept.
TEST(Dates, ATimestampIsItsInstantInUtc) {
  EXPECT_EQ(utc_timestamp("2026-12-10T10:00:00+14:00"), "2026-12-09T20:00:00Z");
  EXPECT_EQ(utc_timestamp("2026-12-31T23:30:00-05:30"), "2027-01-01T05:00:00Z");
  EXPECT_EQ(utc_timestamp("2028-03-01T01:00:00+02:00"), "2028-02-29T23:00:00Z");
  EXPECT_EQ(utc_timestamp("2026-11-30 08:00:00.123"), "2026-11-30T08:00:00Z");
  EXPECT_EQ(utc_timestamp("2026-11-30T08:00:00Z"), "2026-11-30T08:00:00Z");
  EXPECT_EQ(utc_timestamp("not a date"), "not a date");
}

}  // namespace
}  // namespace ub
