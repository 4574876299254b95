// MAMF summaries: best shapes, means across shapes, the peer's footer, the summary record.
#include "records/mamf_result.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace ub {
namespace {

MamfShape shape(int64_t m, int64_t n, int64_t k, double mean, double median, double max, const char* error = "") {
  MamfShape s;
  s.m = m, s.n = n, s.k = k;
  s.mean_tflops = mean, s.median_tflops = median, s.max_tflops = max;
  s.error = error;
  s.ok = s.error.empty();
  return s;
}

MamfOutcome sample() {
  MamfOutcome o;
  o.shapes.push_back(shape(2048, 2048, 13312, 799.5, 800.2, 805.0));
  o.shapes.push_back(shape(2048, 4096, 13312, 790.0, 795.0, 805.3));
  o.shapes.push_back(shape(4096, 4096, 4096, 0, 0, 0, "validation failed"));
  return o;
}

TEST(MamfResult, FooterInThePeersForm) {
  EXPECT_EQ(sample().footer(),
            "Tried 2 shapes => the best outcomes were:\n"
            "mean:   799.5 TFLOPS @ 2048x2048x13312 (MxNxK)\n"
            "median: 800.2 TFLOPS @ 2048x2048x13312 (MxNxK)\n"
            "max:    805.3 TFLOPS @ 2048x4096x13312 (MxNxK)\n");
}

TEST(MamfResult, MeansSkipFailedShapes) {
  const MamfOutcome o = sample();
  EXPECT_DOUBLE_EQ(*o.arithmetic_mean(MamfOutcome::By::median), (800.2 + 795.0) / 2);
  EXPECT_NEAR(*o.geometric_mean(MamfOutcome::By::median), std::sqrt(800.2 * 795.0), 1e-9);
}

TEST(MamfResult, NothingMeasuredHasNoBest) {
  MamfOutcome o;
  o.interrupted = true;
  EXPECT_FALSE(o.best(MamfOutcome::By::mean).has_value());
  EXPECT_FALSE(o.arithmetic_mean(MamfOutcome::By::mean).has_value());
  EXPECT_EQ(o.footer(), "Tried 0 shapes => the best outcomes were:\n"
                        "(interrupted: the best of the shapes measured so far)\n");
}

TEST(MamfResult, SummaryRecord) {
  const nlohmann::json j = sample().summary(0);
  EXPECT_EQ(j["type"], "mamf_summary");
  EXPECT_EQ(j["shapes"], 2);
  EXPECT_EQ(j["shapes_failed"], 1);
  EXPECT_EQ(j["best"]["max"]["shape"], "2048x4096x13312");
  EXPECT_DOUBLE_EQ(j["best"]["median"]["tflops"].get<double>(), 800.2);
}

}  // namespace
}  // namespace ub
