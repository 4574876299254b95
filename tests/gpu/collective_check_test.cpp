// The check `nccl` runs before it times a point, on one GPU without NCCL: outputs built from the
// crafted inputs as each collective would leave them count zero wrong elements, and every changed
// element, NaN included, is counted.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gpu/check.hpp"
#include "gpu/cuda_raii.hpp"
#include "gpu/kernels/collective_check.cuh"
#include "require_gpu.hpp"

namespace ub::gpu {
namespace {

class Wrong {
 public:
  Wrong() : counter_(sizeof(unsigned long long)) {}
  unsigned long long* ptr() { return static_cast<unsigned long long*>(counter_.get()); }
  unsigned long long count(const void* out, Collective c, size_t recv, size_t part, int rank, int world) {
    UB_CUDA_CHECK(cudaMemset(ptr(), 0, sizeof(unsigned long long)));
    count_collective_mismatches(out, Elem::f32, c, recv, part, rank, world, 0, ptr(), nullptr);
    unsigned long long n = 0;
    UB_CUDA_CHECK(cudaMemcpy(&n, ptr(), sizeof n, cudaMemcpyDeviceToHost));
    return n;
  }

 private:
  DeviceBuffer counter_;
};

void put(void* base, size_t index, float v) {
  UB_CUDA_CHECK(cudaMemcpy(static_cast<float*>(base) + index, &v, sizeof v, cudaMemcpyHostToDevice));
}

TEST(CollectiveCheck, CountsEveryWrongElement) {
  UB_REQUIRE_GPU();
  const size_t n = 1001;
  DeviceBuffer out(n * sizeof(float));
  Wrong wrong;
  // One rank: all_reduce leaves the input as it is.
  fill_collective_input(out.get(), Elem::f32, n, 0, 1, nullptr);
  EXPECT_EQ(wrong.count(out.get(), Collective::all_reduce, n, n, 0, 1), 0u);
  put(out.get(), 0, 100.f);
  put(out.get(), 500, -0.5f);
  put(out.get(), 1000, 3.f);
  EXPECT_EQ(wrong.count(out.get(), Collective::all_reduce, n, n, 0, 1), 3u);
  put(out.get(), 7, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(wrong.count(out.get(), Collective::all_reduce, n, n, 0, 1), 4u);
}

TEST(CollectiveCheck, AllGatherWantsEachRanksPartInItsPlace) {
  UB_REQUIRE_GPU();
  const int world = 3;
  const size_t part = 334, recv = part * world;
  DeviceBuffer out(recv * sizeof(float));
  Wrong wrong;
  for (int r = 0; r < world; ++r) {
    fill_collective_input(static_cast<float*>(out.get()) + r * part, Elem::f32, part, r, world, nullptr);
  }
  EXPECT_EQ(wrong.count(out.get(), Collective::all_gather, recv, part, 0, world), 0u);
  // Rank 2's data where rank 1's belongs: every element of that part differs.
  fill_collective_input(static_cast<float*>(out.get()) + part, Elem::f32, part, 2, world, nullptr);
  EXPECT_EQ(wrong.count(out.get(), Collective::all_gather, recv, part, 0, world), part);
  // sendrecv on rank 1 of 3 wants rank 0's data.
  fill_collective_input(out.get(), Elem::f32, part, 0, world, nullptr);
  EXPECT_EQ(wrong.count(out.get(), Collective::sendrecv, part, part, 1, world), 0u);
  EXPECT_EQ(wrong.count(out.get(), Collective::sendrecv, part, part, 2, world), part);
}

}  // namespace
}  // namespace ub::gpu
