// The mixture-of-experts layer on the GPU (gpu/model/moe_layer.hpp) against its CPU reference
// (model/reference/moe_cpu.hpp), forward and backward, for the routers of the models it trains:
// softmax with the top-k renormalised (Qwen3-MoE, Mixtral), softmax without and shared experts
// behind a sigmoid gate (Qwen2-MoE), sigmoid scores with shared experts (DeepSeek's scoring).
//
// The routing is compared exactly (the experts chosen, the permutation, the rows per expert):
// each expert's router row is one power of two on a column of its own, so its logit is a bf16
// value of x, the same on both sides whatever the GEMM's summation order. Everything else is
// compared in relative L2 error at bf16 tolerances; NaN never passes.
#include <cuda_bf16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <vector>

#include "facts/model_shape.hpp"
#include "gpu/cuda_raii.hpp"
#include "gpu/grouped_gemm.hpp"
#include "gpu/linear_gemm.hpp"
#include "gpu/model/moe_layer.hpp"
#include "model/reference/moe_cpu.hpp"
#include "device_vectors.hpp"
#include "require_gpu.hpp"

namespace ub::gpu {
namespace {

constexpr double kRowsTol = 1e-2;   // a GEMM's bf16 output, once rounded
constexpr double kLayerTol = 2e-2;  // through the SwiGLU and a second GEMM, each rounded to bf16
constexpr double kGradTol = 3e-2;   // the backward's chain of bf16 products

struct Case {
  const char* name;
  RouterScoring scoring;
  bool normalize;
  int64_t shared;  // shared intermediate size; 0: none
  bool shared_gate;
};

class MoeLayerTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { UB_REQUIRE_GPU(); }
};

template <class T>
std::vector<T> download_as(const void* p, size_t n) {
  std::vector<T> h(n);
  UB_CUDA_CHECK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// Expert e's rows [first, first + n) of each of a stacked [E, rows, cols] tensor.
Vec slice(const Vec& stacked, int64_t E, int64_t rows, int64_t cols, int64_t first, int64_t n) {
  Vec out;
  for (int64_t e = 0; e < E; ++e) {
    const auto at = stacked.begin() + (e * rows + first) * cols;
    out.insert(out.end(), at, at + n * cols);
  }
  return out;
}

// [E, I, H] gate and up as the layer stacks them: [E, 2I, H], gate rows first.
Vec stack_gate_up(const Vec& gate, const Vec& up, int64_t E, int64_t I, int64_t H) {
  Vec out;
  for (int64_t e = 0; e < E; ++e) {
    out.insert(out.end(), gate.begin() + e * I * H, gate.begin() + (e + 1) * I * H);
    out.insert(out.end(), up.begin() + e * I * H, up.begin() + (e + 1) * I * H);
  }
  return out;
}

TEST_P(MoeLayerTest, ForwardAndBackwardMatchTheReference) {
  const Case c = GetParam();
  MoeLayerShape s;
  s.tokens = 96, s.hidden = 64, s.experts = 16, s.top_k = 2, s.intermediate = 32;
  s.shared_intermediate = c.shared, s.scoring = c.scoring, s.normalize_top_k = c.normalize;
  s.aux_loss_coef = 0.01, s.shared_expert_gate = c.shared_gate;
  const int64_t T = s.tokens, H = s.hidden, E = s.experts, K = s.top_k, I = s.intermediate, Is = s.shared_intermediate;

  Vec x = random_vec(T * H, 11);
  for (int64_t t = 0; t < T; ++t) x[t * H + H - 1] = std::abs(x[t * H + H - 1]);  // see the last expert below
  MoeWeights w;
  w.router.assign(E * H, 0.0);
  for (int64_t e = 0; e + 1 < E; ++e) w.router[e * H + e] = e % 2 ? 2.0 : 1.0;
  w.router[(E - 1) * H + H - 1] = -4.0;  // a logit never above -4 |x|: the last expert gets no rows
  w.gate = random_vec(E * I * H, 12, 0.2), w.up = random_vec(E * I * H, 13, 0.2), w.down = random_vec(E * H * I, 14, 0.2);
  w.shared_gate = random_vec(Is * H, 15, 0.2), w.shared_up = random_vec(Is * H, 16, 0.2);
  w.shared_down = random_vec(H * Is, 17, 0.2);
  if (c.shared_gate) w.shared_expert_gate = random_vec(H, 18, 0.2);
  const Vec dout = random_vec(T * H, 19), residual = random_vec(T * H, 20);

  const MoeForward ref = moe_forward(s, w, x);
  const MoeGrads ref_g = moe_backward(s, w, x, ref, dout);
  ASSERT_EQ(ref.offsets[E], ref.offsets[E - 1]) << "the case needs an expert without rows";

  MoeDims d;
  d.hidden = H, d.experts = E, d.top_k = K, d.intermediate = I, d.shared_intermediate = Is;
  d.sigmoid = c.scoring == RouterScoring::sigmoid, d.normalize = c.normalize;
  d.shared_expert_gate = c.shared_gate, d.aux_coef = s.aux_loss_coef;
  LinearGemm linear(false);
  GroupedGemm grouped;
  MoeLayer layer(d, T, linear, grouped, 2);  // the pass checked is kept in slot 1, another layer's in slot 0
  const auto upload_bf16 = [](const Vec& v) { return v.empty() ? DeviceBuffer() : ::ub::gpu::upload_bf16(v); };
  const DeviceBuffer dx_in = upload_bf16(x), router = upload_bf16(w.router),
                     gate_up = upload_bf16(stack_gate_up(w.gate, w.up, E, I, H)), down = upload_bf16(w.down),
                     shared_gate_up = upload_bf16(stack_gate_up(w.shared_gate, w.shared_up, 1, Is, H)),
                     shared_down = upload_bf16(w.shared_down), shared_expert_gate = upload_bf16(w.shared_expert_gate),
                     ddout = upload_bf16(dout), dresidual = upload_bf16(residual);
  const MoeLayerWeights lw{router.as<bf16>(), gate_up.as<bf16>(), down.as<bf16>(),
                           Is ? shared_gate_up.as<bf16>() : nullptr, Is ? shared_down.as<bf16>() : nullptr,
                           c.shared_gate ? shared_expert_gate.as<bf16>() : nullptr};
  DeviceBuffer out(static_cast<size_t>(T * H) * sizeof(bf16)), dx(out.bytes());
  DeviceBuffer g_router(static_cast<size_t>(E * H) * sizeof(float)), g_gate_up(static_cast<size_t>(E * 2 * I * H) * sizeof(float)),
      g_down(static_cast<size_t>(E * H * I) * sizeof(float)), g_shared_gate_up(static_cast<size_t>(2 * Is * H) * sizeof(float)),
      g_shared_down(static_cast<size_t>(H * Is) * sizeof(float)), g_seg(static_cast<size_t>(H) * sizeof(float));
  const MoeLayerGrads lg{{g_router.get(), Elem::f32},        {g_gate_up.get(), Elem::f32}, {g_down.get(), Elem::f32},
                         {g_shared_gate_up.get(), Elem::f32}, {g_shared_down.get(), Elem::f32}, g_seg.as<float>()};
  // Gradients start as garbage: the backward writes them (an expert without rows gets zeros).
  for (const DeviceBuffer* b : {&g_router, &g_gate_up, &g_down, &g_shared_gate_up, &g_shared_down, &g_seg}) {
    UB_CUDA_CHECK(cudaMemset(b->get(), 0x7f, b->bytes()));
  }
  Stream stream;
  layer.forward(dx_in.as<bf16>(), lw, dresidual.as<bf16>(), out.as<bf16>(), T, stream.get(), 1);
  DeviceBuffer other_out(out.bytes());  // a second layer's pass between this one's forward and backward
  layer.forward(ddout.as<bf16>(), lw, nullptr, other_out.as<bf16>(), T, stream.get(), 0);
  layer.backward(dx_in.as<bf16>(), lw, ddout.as<bf16>(), dx.as<bf16>(), lg, false, stream.get(), 1);
  stream.sync();
  std::cout << "experts' products through " << grouped.library() << "\n";

  // The routing, exactly.
  const auto chosen = download_as<int32_t>(layer.chosen(1), T * K);
  const auto order = download_as<int32_t>(layer.order(1), T * K);
  const auto offsets = download_as<int32_t>(layer.offsets(1), E + 1);
  EXPECT_TRUE(std::equal(chosen.begin(), chosen.end(), ref.chosen.begin())) << "experts chosen";
  EXPECT_TRUE(std::equal(order.begin(), order.end(), ref.order.begin())) << "the permutation";
  EXPECT_TRUE(std::equal(offsets.begin(), offsets.end(), ref.offsets.begin())) << "rows per expert";
  for (int64_t e = 0; e < E; ++e) EXPECT_EQ(layer.rows_per_expert(1)[e], ref.offsets[e + 1] - ref.offsets[e]) << e;
  const auto probs = download_as<float>(layer.probs(1), T * E);
  const auto weights = download_as<float>(layer.weights(1), T * K);
  EXPECT_LT(rel_l2(Vec(probs.begin(), probs.end()), ref.probs), 1e-5);
  EXPECT_LT(rel_l2(Vec(weights.begin(), weights.end()), ref.weights), 1e-5);
  const double aux = download_as<double>(layer.aux_loss(1), 1)[0];
  EXPECT_NEAR(aux, ref.aux, 1e-5 * ref.aux);

  // The rows and the output.
  const int64_t rows = T * K;
  const auto gu = download_as<__nv_bfloat16>(layer.gate_up_rows(1), rows * 2 * I);  // per row: gate | up
  EXPECT_LT(rel_l2(Vec(gu.begin(), gu.end()), stack_gate_up(ref.gate, ref.up, rows, 1, I)), kRowsTol);
  const auto yp = download_as<__nv_bfloat16>(layer.expert_rows(1), rows * H);
  EXPECT_LT(rel_l2(Vec(yp.begin(), yp.end()), ref.expert_out), kLayerTol);
  Vec out_ref = ref.out;  // the decoder layer's residual, added in the combine
  for (size_t i = 0; i < out_ref.size(); ++i) out_ref[i] += residual[i];
  EXPECT_LT(rel_l2(download_bf16(out, T * H), out_ref), kLayerTol);

  // The backward.
  EXPECT_LT(rel_l2(download_bf16(dx, T * H), ref_g.dx), kGradTol) << "dx";
  EXPECT_LT(rel_l2(download_f32(g_router, E * H), ref_g.dw.router), kGradTol) << "router";
  const Vec g_gu = download_f32(g_gate_up, E * 2 * I * H);
  EXPECT_LT(rel_l2(slice(g_gu, E, 2 * I, H, 0, I), ref_g.dw.gate), kGradTol) << "gate";
  EXPECT_LT(rel_l2(slice(g_gu, E, 2 * I, H, I, I), ref_g.dw.up), kGradTol) << "up";
  EXPECT_LT(rel_l2(download_f32(g_down, E * H * I), ref_g.dw.down), kGradTol) << "down";
  const Vec empty_expert = slice(download_f32(g_down, E * H * I), 1, E * H, I, (E - 1) * H, H);
  EXPECT_TRUE(std::all_of(empty_expert.begin(), empty_expert.end(), [](double v) { return v == 0; }))
      << "an expert without rows has zero gradients";
  if (Is > 0) {
    const Vec g_sgu = download_f32(g_shared_gate_up, 2 * Is * H);
    EXPECT_LT(rel_l2(slice(g_sgu, 1, 2 * Is, H, 0, Is), ref_g.dw.shared_gate), kGradTol) << "shared gate";
    EXPECT_LT(rel_l2(slice(g_sgu, 1, 2 * Is, H, Is, Is), ref_g.dw.shared_up), kGradTol) << "shared up";
    EXPECT_LT(rel_l2(download_f32(g_shared_down, H * Is), ref_g.dw.shared_down), kGradTol) << "shared down";
  }
  if (c.shared_gate) {
    EXPECT_LT(rel_l2(download_f32(g_seg, H), ref_g.dw.shared_expert_gate), kGradTol) << "shared expert gate";
  }
}

INSTANTIATE_TEST_SUITE_P(Routers, MoeLayerTest,
                         ::testing::Values(Case{"SoftmaxTopKRenormalised", RouterScoring::softmax, true, 0, false},
                                           Case{"SoftmaxSharedExpertsGated", RouterScoring::softmax, false, 32, true},
                                           Case{"SigmoidSharedExperts", RouterScoring::sigmoid, true, 32, false}),
                         [](const ::testing::TestParamInfo<Case>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace ub::gpu
