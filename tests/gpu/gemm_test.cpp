// cuBLASLt GEMMs on the real library: every dtype path runs and validates against the double
// reference; validation catches a deliberately wrong result; block-scaled formats are refused on
// a GPU without the hardware for them.
#include "facts/gpu_features.hpp"
#include "gpu/gemm.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "require_gpu.hpp"

namespace ub::gpu {
namespace {

// Each test gets the GPU's stream, cuBLASLt handle and workspace, or skips: no GPU, or a dtype
// this GPU cannot run (the reason is the capability gate's own message).
class GemmDtype : public ::testing::TestWithParam<Dtype> {
 protected:
  void SetUp() override {
    UB_REQUIRE_GPU();
    const DeviceInfo d = list_devices().devices.at(0);
    if (auto why = gemm_unsupported_reason(GetParam(), ComputeCapability{d.cc_major, d.cc_minor})) GTEST_SKIP() << *why;
    stream_ = std::make_unique<Stream>();
    lt_ = std::make_unique<CublasLt>();
    ws_ = std::make_unique<DeviceBuffer>(size_t{64} << 20);
  }
  cudaStream_t s() const { return stream_->get(); }
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<CublasLt> lt_;
  std::unique_ptr<DeviceBuffer> ws_;
};

TEST_P(GemmDtype, EveryHeuristicAlgorithmValidates) {
  const Dtype d = GetParam();
  for (const GemmShape shape : {GemmShape{256, 512, 1024}, GemmShape{1024, 768, 4096}}) {
    GemmOperands ops(d, shape, 42, s());
    GemmPlan plan(*lt_, ops, ws_->bytes(), 4);
    ASSERT_FALSE(plan.algos().empty());
    for (size_t a = 0; a < plan.algos().size(); ++a) {
      ops.randomise_output(7, s());
      plan.run(static_cast<int>(a), ops, *ws_, s());
      const GemmCheck c = check_gemm(ops, 256, 1, s());
      EXPECT_TRUE(c.ok) << to_string(d) << " " << plan.algos()[a].label() << ": " << c.detail;
      EXPECT_EQ(c.nans, 0);
      EXPECT_LT(c.worst_ratio, 1.0);
      EXPECT_GT(c.worst_ratio, 0.0) << "a reference that is never off by anything is suspicious";
    }
  }
}

TEST_P(GemmDtype, ValidationCatchesAWrongResult) {
  GemmOperands ops(GetParam(), {512, 512, 2048}, 3, s());
  GemmPlan plan(*lt_, ops, ws_->bytes(), 1);
  plan.run(0, ops, *ws_, s());
  EXPECT_TRUE(check_gemm(ops, 64, 5, s()).ok);
  const GemmCheck bad = check_gemm(ops, 64, 5, s(), /*corrupt_one=*/true);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.failures, 1);
  // An output never written (still the random fill) fails too.
  ops.randomise_output(99, s());
  EXPECT_FALSE(check_gemm(ops, 64, 5, s()).ok);
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, GemmDtype,
                         ::testing::Values(Dtype::bf16, Dtype::fp16, Dtype::tf32, Dtype::fp32,
                                           Dtype::fp8, Dtype::mxfp8, Dtype::nvfp4),
                         [](const auto& p) { return std::string(to_string(p.param)); });

TEST(GemmSupport, ShapesTheDtypeCannotTake) {
  EXPECT_TRUE(gemm_shape_problem(Dtype::fp8, {100, 128, 128}).has_value());
  EXPECT_FALSE(gemm_shape_problem(Dtype::bf16, {100, 128, 127}).has_value());
}

}  // namespace
}  // namespace ub::gpu
