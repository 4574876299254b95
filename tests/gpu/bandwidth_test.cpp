// The bandwidth kernels do the whole job, and their checks notice when they do not.
#include "gpu/kernels/bandwidth.cuh"

#include <gtest/gtest.h>

#include "gpu/cuda_raii.hpp"
#include "require_gpu.hpp"

namespace ub::gpu {
namespace {

TEST(BandwidthCheck, XorOfRangeClosedForm) {
  for (uint64_t n : {0u, 1u, 2u, 3u, 4u, 5u, 1000u, 1023u}) {
    unsigned x = 0;
    for (uint64_t i = 0; i < n; ++i) x ^= static_cast<unsigned>(i);
    EXPECT_EQ(xor_of_range(n), x) << n;
  }
}

TEST(Bandwidth, KernelsAreValidatedAndChecksCatchPartialWork) {
  UB_REQUIRE_GPU();
  Stream s;
  const size_t bytes = size_t{96} << 20;
  DeviceBuffer src(bytes), dst(bytes), count(sizeof(unsigned long long));
  const int blocks = bandwidth_blocks(0);
  auto mismatches = [&](bool index, unsigned pattern) {
    count_mismatches(dst.get(), bytes, index, pattern, count.as<unsigned long long>(), s.get());
    unsigned long long n = 0;
    UB_CUDA_CHECK(cudaMemcpyAsync(&n, count.get(), sizeof n, cudaMemcpyDeviceToHost, s.get()));
    s.sync();
    return n;
  };
  fill_word_index(src.get(), bytes, s.get());
  UB_CUDA_CHECK(cudaMemsetAsync(dst.get(), 0xFF, bytes, s.get()));
  bandwidth_copy(dst.get(), src.get(), bytes, blocks, s.get());
  EXPECT_EQ(mismatches(true, 0), 0u);
  // A copy of half the buffer leaves the other half's words wrong.
  UB_CUDA_CHECK(cudaMemsetAsync(dst.get(), 0xFF, bytes, s.get()));
  bandwidth_copy(dst.get(), src.get(), bytes / 2, blocks, s.get());
  EXPECT_EQ(mismatches(true, 0), bytes / 2 / 4);

  bandwidth_write(dst.get(), bytes, 0xA5A5A5A5u, blocks, s.get());
  EXPECT_EQ(mismatches(false, 0xA5A5A5A5u), 0u);

  unsigned* x = count.as<unsigned>();
  auto read_xor = [&](size_t n) {
    UB_CUDA_CHECK(cudaMemsetAsync(x, 0, sizeof(unsigned), s.get()));
    bandwidth_read(src.get(), n, x, blocks, s.get());
    unsigned got = 0;
    UB_CUDA_CHECK(cudaMemcpyAsync(&got, x, sizeof got, cudaMemcpyDeviceToHost, s.get()));
    s.sync();
    return got;
  };
  EXPECT_EQ(read_xor(bytes), xor_of_range(bytes / 4));
  EXPECT_NE(read_xor(bytes - 64), xor_of_range(bytes / 4));  // a read that skips the tail
}

}  // namespace
}  // namespace ub::gpu
