// The timing protocol on a real GPU: samples are positive, stop reasons are honest, and an
// interrupt stops it after the current batch.
#include "gpu/timing.hpp"

#include <gtest/gtest.h>

#include "gpu/kernels/bandwidth.cuh"
#include "require_gpu.hpp"

namespace ub::gpu {
namespace {

TEST(Timing, StopsOnNoiseOrLimitsAndOnInterrupt) {
  UB_REQUIRE_GPU();
  Stream s;
  const size_t bytes = size_t{256} << 20;
  DeviceBuffer a(bytes), b(bytes);
  const Work copy = [&](cudaStream_t st) {
    bandwidth_copy(b.get(), a.get(), bytes, BandwidthKernel::tiled, st);
  };
  TimingPolicy p;
  p.min_samples = 10;
  p.max_samples = 200;
  const Timing t = time_samples(s.get(), {}, copy, p);
  EXPECT_GE(t.ms.size(), 10u);
  EXPECT_LE(t.ms.size(), 200u);
  EXPECT_GT(t.summary.min, 0.0);
  EXPECT_TRUE(t.stop_reason == "noise" || t.stop_reason == "max_samples" || t.stop_reason == "max_seconds")
      << t.stop_reason;
  if (t.stop_reason == "noise") {
    EXPECT_LE(t.summary.relative_noise(), p.target_noise);
  }

  std::atomic<bool> stop{true};
  const Timing cut = time_samples(s.get(), {}, copy, p, &stop);
  EXPECT_EQ(cut.stop_reason, "interrupted");
  EXPECT_EQ(cut.ms.size(), static_cast<size_t>(p.batch));
}

}  // namespace
}  // namespace ub::gpu
