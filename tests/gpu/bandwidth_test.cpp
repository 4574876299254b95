// The bandwidth kernels (both launch shapes) do the whole job, and their checks notice when they
// do not.
#include "gpu/kernels/bandwidth.cuh"

#include <gtest/gtest.h>

#include "gpu/cuda_raii.hpp"
#include "require_gpu.hpp"

namespace ub::gpu {
namespace {

TEST(BandwidthCheck, SumOfWordIndicesClosedForm) {
  for (uint64_t n : {0u, 1u, 2u, 3u, 1000u, 1023u}) {
    unsigned long long x = 0;
    for (uint64_t i = 0; i < n; ++i) x += i;
    EXPECT_EQ(sum_of_word_indices(n), x) << n;
  }
}

class BandwidthKernels : public ::testing::TestWithParam<BandwidthKernel> {};

TEST_P(BandwidthKernels, ValidatedAndChecksCatchPartialWork) {
  UB_REQUIRE_GPU();
  const BandwidthKernel k = GetParam();
  Stream s;
  const size_t bytes = (size_t{96} << 20) + 192;  // not a whole number of tiles
  DeviceBuffer src(bytes), dst(bytes), count(sizeof(unsigned long long));
  auto mismatches = [&](bool index, unsigned pattern) {
    count_mismatches(dst.get(), bytes, index, pattern, count.as<unsigned long long>(), s.get());
    unsigned long long n = 0;
    UB_CUDA_CHECK(cudaMemcpyAsync(&n, count.get(), sizeof n, cudaMemcpyDeviceToHost, s.get()));
    s.sync();
    return n;
  };
  fill_word_index(src.get(), bytes, s.get());
  UB_CUDA_CHECK(cudaMemsetAsync(dst.get(), 0xFF, bytes, s.get()));
  bandwidth_copy(dst.get(), src.get(), bytes, k, s.get());
  EXPECT_EQ(mismatches(true, 0), 0u);
  // A copy of half the buffer leaves the other half's words wrong.
  UB_CUDA_CHECK(cudaMemsetAsync(dst.get(), 0xFF, bytes, s.get()));
  bandwidth_copy(dst.get(), src.get(), bytes / 2 / 64 * 64, k, s.get());
  EXPECT_EQ(mismatches(true, 0), (bytes - bytes / 2 / 64 * 64) / 4);

  bandwidth_write(dst.get(), bytes, 0xA5A5A5A5u, k, s.get());
  EXPECT_EQ(mismatches(false, 0xA5A5A5A5u), 0u);

  auto* sum = count.as<unsigned long long>();
  auto read_sum = [&](size_t n) {
    UB_CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(unsigned long long), s.get()));
    bandwidth_read(src.get(), n, sum, k, s.get());
    unsigned long long got = 0;
    UB_CUDA_CHECK(cudaMemcpyAsync(&got, sum, sizeof got, cudaMemcpyDeviceToHost, s.get()));
    s.sync();
    return got;
  };
  EXPECT_EQ(read_sum(bytes), sum_of_word_indices(bytes / 4));
  EXPECT_NE(read_sum(bytes - 64), sum_of_word_indices(bytes / 4));  // a read that skips the tail
}

INSTANTIATE_TEST_SUITE_P(Shapes, BandwidthKernels,
                         ::testing::Values(BandwidthKernel::tiled, BandwidthKernel::tiled8,
                                           BandwidthKernel::tiled8cs, BandwidthKernel::tiled8pf,
                                           BandwidthKernel::persistent,
                                           BandwidthKernel::bulk, BandwidthKernel::memcpy),
                         [](const auto& p) { return std::string(to_string(p.param)); });

}  // namespace
}  // namespace ub::gpu
