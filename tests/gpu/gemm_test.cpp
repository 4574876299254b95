// cuBLASLt GEMMs on the real library: every dtype path runs and validates against the double
// reference; validation catches a deliberately wrong result; block-scaled formats are refused on
// a GPU without the hardware for them.
#include "gpu/gemm.hpp"

#include <gtest/gtest.h>

#include "require_gpu.hpp"

namespace ub::gpu {
namespace {

struct Gpu {
  int major = 0, minor = 0;
  Gpu() {
    const DeviceList l = list_devices();
    major = l.devices.at(0).cc_major;
    minor = l.devices.at(0).cc_minor;
  }
};

class GemmDtype : public ::testing::TestWithParam<Dtype> {};

TEST_P(GemmDtype, EveryHeuristicAlgorithmValidates) {
  UB_REQUIRE_GPU();
  const Gpu g;
  const Dtype d = GetParam();
  if (auto why = gemm_unsupported_reason(d, g.major, g.minor)) GTEST_SKIP() << *why;
  Stream s;
  CublasLt lt;
  DeviceBuffer ws(size_t{64} << 20);
  for (const GemmShape shape : {GemmShape{256, 512, 1024}, GemmShape{1024, 768, 4096}}) {
    GemmOperands ops(d, shape, 42, s.get());
    GemmPlan plan(lt, ops, ws.bytes(), 4);
    ASSERT_FALSE(plan.algos().empty());
    for (size_t a = 0; a < plan.algos().size(); ++a) {
      ops.randomise_output(7, s.get());
      plan.run(static_cast<int>(a), ops, ws, s.get());
      const GemmCheck c = check_gemm(ops, 256, 1, s.get());
      EXPECT_TRUE(c.ok) << to_string(d) << " " << plan.algos()[a].label() << ": " << c.detail;
      EXPECT_EQ(c.nans, 0);
      EXPECT_LT(c.worst_ratio, 1.0);
      EXPECT_GT(c.worst_ratio, 0.0) << "a reference that is never off by anything is suspicious";
    }
  }
}

TEST_P(GemmDtype, ValidationCatchesAWrongResult) {
  UB_REQUIRE_GPU();
  const Gpu g;
  const Dtype d = GetParam();
  if (auto why = gemm_unsupported_reason(d, g.major, g.minor)) GTEST_SKIP() << *why;
  Stream s;
  CublasLt lt;
  DeviceBuffer ws(size_t{64} << 20);
  GemmOperands ops(d, {512, 512, 2048}, 3, s.get());
  GemmPlan plan(lt, ops, ws.bytes(), 1);
  plan.run(0, ops, ws, s.get());
  EXPECT_TRUE(check_gemm(ops, 64, 5, s.get()).ok);
  const GemmCheck bad = check_gemm(ops, 64, 5, s.get(), /*corrupt_one=*/true);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.failures, 1);
  // An output never written (still the random fill) fails too.
  ops.randomise_output(99, s.get());
  EXPECT_FALSE(check_gemm(ops, 64, 5, s.get()).ok);
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, GemmDtype,
                         ::testing::Values(Dtype::bf16, Dtype::fp16, Dtype::tf32, Dtype::fp32,
                                           Dtype::fp8, Dtype::mxfp8, Dtype::nvfp4),
                         [](const auto& p) { return std::string(to_string(p.param)); });

TEST(GemmSupport, CapabilityGate) {
  EXPECT_FALSE(gemm_unsupported_reason(Dtype::fp8, 9, 0).has_value());
  EXPECT_TRUE(gemm_unsupported_reason(Dtype::fp8, 8, 0).has_value());
  const auto why = gemm_unsupported_reason(Dtype::nvfp4, 9, 0);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("Blackwell"), std::string::npos) << *why;
  EXPECT_FALSE(gemm_unsupported_reason(Dtype::nvfp4, 10, 0).has_value());
  EXPECT_TRUE(gemm_shape_problem(Dtype::fp8, {100, 128, 128}).has_value());
  EXPECT_FALSE(gemm_shape_problem(Dtype::bf16, {100, 128, 127}).has_value());
}

}  // namespace
}  // namespace ub::gpu
