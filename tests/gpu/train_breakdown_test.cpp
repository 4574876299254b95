// The breakdown of a profiled step (host side, no GPU): operations aggregated per class and per
// label, classes ordered by time, time between operations counted as "other", rates computed.
#include "measure/train_breakdown.hpp"

#include <gtest/gtest.h>

namespace ub::measure {
namespace {

TEST(TrainBreakdown, AggregatesByClassAndLabelAndCountsTheGaps) {
  std::vector<gpu::StepProfiler::Op> ops = {
      {"gemm", "qkv fwd", 2e12, 0, 2.0f},   {"attention", "attention fwd", 1e12, 0, 3.0f},
      {"gemm", "qkv fwd", 2e12, 0, 2.0f},   {"optimizer", "AdamW", 0, 8e9, 2.0f},
      {"gemm", "down fwd", 1e12, 0, 1.0f},
  };
  GemmChoice c;
  c.shape = "4096x8192x4096 (TN, bf16 out)", c.flop = 2.7e11, c.best_ms = 0.4, c.first_ms = 0.45, c.candidates = 8;
  const TrainBreakdown b = make_breakdown(ops, 12.0, {c});
  ASSERT_EQ(b.classes.size(), 4u);  // gemm, attention, optimizer, other (the 2 ms between operations)
  EXPECT_EQ(b.classes[0].cls, "gemm");
  EXPECT_DOUBLE_EQ(b.classes[0].ms, 5.0);
  EXPECT_EQ(b.classes[0].launches, 3);
  EXPECT_NEAR(b.classes[0].tflops(), 5e12 / 1e12 / 5e-3, 1e-9);
  EXPECT_EQ(b.classes.back().cls, "other");
  EXPECT_DOUBLE_EQ(b.classes.back().ms, 2.0);
  ASSERT_EQ(b.ops.size(), 5u);  // qkv fwd, attention fwd, AdamW, down fwd, gaps
  EXPECT_EQ(b.ops[0].label, "qkv fwd");
  EXPECT_EQ(b.ops[0].launches, 2);
  EXPECT_NEAR(b.ops[2].gbps(), 8e9 / 1e9 / 2e-3, 1e-9);
  const nlohmann::json j = b;
  EXPECT_EQ(j["type"], "train_breakdown");
  EXPECT_DOUBLE_EQ(j["step_ms"].get<double>(), 12.0);
  EXPECT_NEAR(j["classes"][0]["share"].get<double>(), 5.0 / 12.0, 1e-12);
  EXPECT_NEAR(j["gemm_algorithms"][0]["tflops"].get<double>(), 2.7e11 / 1e12 / 0.4e-3, 1e-9);
  EXPECT_NE(b.table().find("by operation"), std::string::npos);
}

}  // namespace
}  // namespace ub::measure
