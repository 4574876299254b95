// The experts' products (gpu/grouped_gemm.hpp) against a double-precision reference, each way they
// can run: all grouped, every expert alone, split (the experts of many rows alone on a second
// stream beside one grouped call), and as timed. The rows per expert are uneven as a fresh router
// makes them: experts without rows, a few rows, and some with thousands; a split puts experts on
// both sides. Forward, data gradient, and weight gradient into bf16 and fp32, written and added to.
#include <cuda_bf16.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <iostream>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "gpu/cuda_raii.hpp"
#include "gpu/grouped_gemm.hpp"
#include "device_vectors.hpp"
#include "require_gpu.hpp"

namespace ub::gpu {
namespace {

constexpr double kBf16OutTol = 1e-2;  // one product, rounded once to bf16
constexpr double kFp32OutTol = 1e-5;  // one product, accumulated and kept in fp32

const std::vector<int64_t> kRows{0, 3, 1500, 17, 0, 0, 300, 8, 1100, 1};
constexpr int64_t kIn = 256, kOut = 192;

int64_t total_rows() { return std::accumulate(kRows.begin(), kRows.end(), int64_t{0}); }

// Per expert e, its rows [first, first + rows[e]): y = x w_e^T, dx = dy w_e, dw_e = dy^T x.
struct Reference {
  Vec y, dx, dw;
};

Reference reference(const Vec& x, const Vec& dy, const Vec& w) {
  const int64_t R = total_rows(), E = static_cast<int64_t>(kRows.size());
  Reference r{Vec(R * kOut, 0.0), Vec(R * kIn, 0.0), Vec(E * kOut * kIn, 0.0)};
  int64_t first = 0;
  for (int64_t e = 0; e < E; first += kRows[e], ++e) {
    const double* we = w.data() + e * kOut * kIn;
    for (int64_t i = first; i < first + kRows[e]; ++i) {
      for (int64_t o = 0; o < kOut; ++o) {
        double acc = 0;
        for (int64_t k = 0; k < kIn; ++k) acc += x[i * kIn + k] * we[o * kIn + k];
        r.y[i * kOut + o] = acc;
        for (int64_t k = 0; k < kIn; ++k) {
          r.dx[i * kIn + k] += dy[i * kOut + o] * we[o * kIn + k];
          r.dw[e * kOut * kIn + o * kIn + k] += dy[i * kOut + o] * x[i * kIn + k];
        }
      }
    }
  }
  return r;
}

struct Way {
  const char* name;
  std::optional<int64_t> per_expert_from;  // none: timed
};

class GroupedGemmTest : public ::testing::TestWithParam<Way> {
 protected:
  void SetUp() override { UB_REQUIRE_GPU(); }
};

TEST_P(GroupedGemmTest, EveryWayMatchesTheReference) {
  const Way way = GetParam();
  const int64_t R = total_rows(), E = static_cast<int64_t>(kRows.size());
  const Vec x = random_vec(R * kIn, 1), dy = random_vec(R * kOut, 2), w = random_vec(E * kOut * kIn, 3, 0.1);
  const Reference ref = reference(x, dy, w);

  const DeviceBuffer dx_in = upload_bf16(x), ddy = upload_bf16(dy), dw_in = upload_bf16(w);
  DeviceBuffer y(R * kOut * sizeof(bf16)), dx(R * kIn * sizeof(bf16));
  DeviceBuffer dw16(E * kOut * kIn * sizeof(bf16)), dw32(E * kOut * kIn * sizeof(float));
  // What was there before: an expert without rows must come out zero, not keep it.
  UB_CUDA_CHECK(cudaMemset(dw16.get(), 0x3f, dw16.bytes()));
  UB_CUDA_CHECK(cudaMemset(dw32.get(), 0x3f, dw32.bytes()));

  const Stream stream;
  GroupedGemm g;
  g.set_stream(stream.get());
  if (way.per_expert_from) g.always(*way.per_expert_from);
  const auto* xin = dx_in.as<bf16>();
  const auto* dyin = ddy.as<bf16>();
  const auto* win = dw_in.as<bf16>();
  g.forward(xin, win, y.as<bf16>(), kRows, kIn, kOut);
  g.dgrad(dyin, win, dx.as<bf16>(), kRows, kIn, kOut);
  g.wgrad(dyin, xin, bf16_view(dw16.as<bf16>()), kRows, kIn, kOut, false);
  g.wgrad(dyin, xin, fp32_view(dw32.as<float>()), kRows, kIn, kOut, false);
  stream.sync();
  std::cout << way.name << ": " << g.library() << "\n";
  EXPECT_LT(rel_l2(download_bf16(y, R * kOut), ref.y), kBf16OutTol) << "forward";
  EXPECT_LT(rel_l2(download_bf16(dx, R * kIn), ref.dx), kBf16OutTol) << "dgrad";
  EXPECT_LT(rel_l2(download_bf16(dw16, E * kOut * kIn), ref.dw), kBf16OutTol) << "wgrad into bf16";
  EXPECT_LT(rel_l2(download_f32(dw32, E * kOut * kIn), ref.dw), kFp32OutTol) << "wgrad into fp32";

  // Added to: a second wgrad into fp32 doubles it, and an expert without rows keeps its zeros.
  g.wgrad(dyin, xin, fp32_view(dw32.as<float>()), kRows, kIn, kOut, true);
  stream.sync();
  Vec twice = ref.dw;
  for (double& v : twice) v *= 2;
  EXPECT_LT(rel_l2(download_f32(dw32, E * kOut * kIn), twice), kFp32OutTol) << "wgrad added to fp32";
}

std::string way_test_name(const ::testing::TestParamInfo<Way>& info) {
  std::string name;
  bool upper = true;
  for (const char c : std::string(info.param.name)) {
    if (c == ' ') {
      upper = true;
    } else {
      name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
    }
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Ways, GroupedGemmTest,
                         ::testing::Values(Way{"all grouped", GroupedGemm::kAllGrouped}, Way{"every expert alone", 0},
                                           Way{"split at 1000 rows", 1000}, Way{"split at 8 rows", 8},
                                           Way{"timed", std::nullopt}),
                         way_test_name);

}  // namespace
}  // namespace ub::gpu
