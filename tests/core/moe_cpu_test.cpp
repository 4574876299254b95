// The CPU reference MoE layer: the permuted computation against the plain sum over experts, the
// load-balancing loss by hand, every gradient against finite differences (softmax and sigmoid
// scoring, renormalised or not, with a shared expert and the auxiliary loss), tokens per expert.
#include "model/reference/moe_cpu.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "base/error.hpp"
#include "random_values.hpp"

namespace ub {
namespace {

MoeWeights random_weights(const MoeLayerShape& s, uint64_t seed) {
  const auto n = [](int64_t a, int64_t b, int64_t c = 1) { return static_cast<size_t>(a * b * c); };
  const int64_t H = s.hidden, E = s.experts, I = s.intermediate, Is = s.shared_intermediate;
  return {randn(n(E, H), seed), randn(n(E, I, H), seed + 1), randn(n(E, I, H), seed + 2), randn(n(E, H, I), seed + 3),
          randn(n(Is, H), seed + 4), randn(n(Is, H), seed + 5), randn(n(H, Is), seed + 6),
          s.shared_expert_gate ? randn(n(H, 1), seed + 7) : std::vector<double>{}};
}

// One expert's SwiGLU on one token, written out without the permutation.
std::vector<double> expert_on(const MoeLayerShape& s, const MoeWeights& w, int64_t e, const double* x) {
  const int64_t H = s.hidden, I = s.intermediate;
  std::vector<double> a(static_cast<size_t>(I)), y(static_cast<size_t>(H), 0.0);
  for (int64_t j = 0; j < I; ++j) {
    double g = 0, u = 0;
    for (int64_t c = 0; c < H; ++c) {
      g += w.gate[static_cast<size_t>((e * I + j) * H + c)] * x[c];
      u += w.up[static_cast<size_t>((e * I + j) * H + c)] * x[c];
    }
    a[static_cast<size_t>(j)] = g / (1 + std::exp(-g)) * u;
  }
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t j = 0; j < I; ++j) y[static_cast<size_t>(h)] += w.down[static_cast<size_t>((e * H + h) * I + j)] * a[static_cast<size_t>(j)];
  }
  return y;
}

TEST(MoeCpu, PermutedExpertsEqualThePlainWeightedSum) {
  const MoeLayerShape s{9, 4, 5, 2, 3, 0, RouterScoring::softmax, true, 0.0};
  const MoeWeights w = random_weights(s, 11);
  const auto x = randn(static_cast<size_t>(s.tokens * s.hidden), 12);
  const MoeForward f = moe_forward(s, w, x);
  for (int64_t t = 0; t < s.tokens; ++t) {
    std::vector<double> want(static_cast<size_t>(s.hidden), 0.0);
    double weight_sum = 0;
    for (int64_t i = 0; i < s.top_k; ++i) {
      const size_t slot = static_cast<size_t>(t * s.top_k + i);
      weight_sum += f.weights[slot];
      const auto y = expert_on(s, w, f.chosen[slot], x.data() + t * s.hidden);
      for (int64_t h = 0; h < s.hidden; ++h) want[static_cast<size_t>(h)] += f.weights[slot] * y[static_cast<size_t>(h)];
    }
    EXPECT_NEAR(weight_sum, 1.0, 1e-12) << "renormalised top-k weights of token " << t;
    EXPECT_GE(f.weights[static_cast<size_t>(t * s.top_k)], f.weights[static_cast<size_t>(t * s.top_k + 1)]);
    for (int64_t h = 0; h < s.hidden; ++h) EXPECT_NEAR(f.out[static_cast<size_t>(t * s.hidden + h)], want[static_cast<size_t>(h)], 1e-12);
  }
  // The permutation lists every slot once, grouped by expert.
  ASSERT_EQ(f.order.size(), static_cast<size_t>(s.tokens * s.top_k));
  for (int64_t e = 0; e < s.experts; ++e) {
    for (int64_t r = f.offsets[static_cast<size_t>(e)]; r < f.offsets[static_cast<size_t>(e + 1)]; ++r) {
      EXPECT_EQ(f.chosen[static_cast<size_t>(f.order[static_cast<size_t>(r)])], e);
    }
  }
}

TEST(MoeCpu, LoadBalancingLossByHand) {
  // Router = identity and x = log p: token 0 scores (0.7, 0.3), token 1 (0.6, 0.4); top-1 sends both
  // to expert 0. f = (1, 0), P = (0.65, 0.35): aux = 2 * (1 * 0.65 + 0 * 0.35) = 1.3.
  const MoeLayerShape s{2, 2, 2, 1, 1, 0, RouterScoring::softmax, false, 0.0};
  MoeWeights w = random_weights(s, 3);
  w.router = {1, 0, 0, 1};
  const MoeForward f = moe_forward(s, w, {std::log(0.7), std::log(0.3), std::log(0.6), std::log(0.4)});
  EXPECT_NEAR(f.aux, 1.3, 1e-12);
  EXPECT_NEAR(f.weights[0], 0.7, 1e-12);  // not renormalised: the softmax score itself
  const ExpertLoad load = expert_load(f);
  EXPECT_EQ(load.min, 0);
  EXPECT_EQ(load.max, 2);
  EXPECT_DOUBLE_EQ(load.median, 1.0);
}

TEST(MoeCpu, SigmoidScoresAreIndependentPerExpert) {
  const MoeLayerShape s{1, 2, 3, 2, 1, 0, RouterScoring::sigmoid, false, 0.0};
  MoeWeights w = random_weights(s, 5);
  w.router = {1, 0, 0, 1, 1, 1};
  const MoeForward f = moe_forward(s, w, {0.5, -2.0});  // logits 0.5, -2, -1.5
  EXPECT_NEAR(f.probs[0], 1 / (1 + std::exp(-0.5)), 1e-12);
  EXPECT_EQ(f.chosen, (std::vector<int64_t>{0, 2}));
  EXPECT_NEAR(f.weights[1], 1 / (1 + std::exp(1.5)), 1e-12);
}

class MoeGrad : public ::testing::TestWithParam<MoeLayerShape> {};

TEST_P(MoeGrad, MatchesFiniteDifferences) {
  const MoeLayerShape s = GetParam();
  MoeWeights w = random_weights(s, 21);
  auto x = randn(static_cast<size_t>(s.tokens * s.hidden), 22);
  const auto dout = randn(x.size(), 23);
  const MoeForward f = moe_forward(s, w, x);
  const MoeGrads g = moe_backward(s, w, x, f, dout);
  auto loss = [&] {
    const MoeForward r = moe_forward(s, w, x);
    double l = s.aux_loss_coef * r.aux;
    for (size_t i = 0; i < r.out.size(); ++i) l += r.out[i] * dout[i];
    return l;
  };
  const double h = 1e-6;
  auto check = [&](std::vector<double>& v, const std::vector<double>& grad, const char* name) {
    ASSERT_EQ(v.size(), grad.size()) << name;
    for (size_t i = 0; i < v.size(); ++i) {
      const double keep = v[i];
      v[i] = keep + h;
      const double up = loss();
      v[i] = keep - h;
      const double down = loss();
      v[i] = keep;
      EXPECT_NEAR(grad[i], (up - down) / (2 * h), 1e-6 * std::max(1.0, std::abs(grad[i]))) << name << "[" << i << "]";
    }
  };
  check(x, g.dx, "dx");
  check(w.router, g.dw.router, "router");
  check(w.gate, g.dw.gate, "gate");
  check(w.up, g.dw.up, "up");
  check(w.down, g.dw.down, "down");
  check(w.shared_gate, g.dw.shared_gate, "shared_gate");
  check(w.shared_up, g.dw.shared_up, "shared_up");
  check(w.shared_down, g.dw.shared_down, "shared_down");
  check(w.shared_expert_gate, g.dw.shared_expert_gate, "shared_expert_gate");
}

INSTANTIATE_TEST_SUITE_P(
    Layers, MoeGrad,
    ::testing::Values(MoeLayerShape{6, 4, 4, 2, 3, 2, RouterScoring::softmax, true, 0.1},   // Qwen3-MoE style + shared
                      MoeLayerShape{5, 3, 4, 2, 2, 0, RouterScoring::softmax, false, 0.5},  // scores as weights
                      MoeLayerShape{5, 3, 4, 2, 2, 3, RouterScoring::sigmoid, true, 0.2},   // DeepSeek-style scores
                      MoeLayerShape{4, 3, 3, 3, 2, 0, RouterScoring::softmax, true, 0.0},   // every expert chosen
                      MoeLayerShape{5, 3, 4, 2, 2, 3, RouterScoring::softmax, false, 0.1, true}));  // Qwen2-MoE: gated shared expert

// Qwen2-MoE's gate of the shared expert: a zero gate weight scales the shared output by a half.
TEST(MoeCpu, TheSharedExpertsGateScalesItsOutput) {
  MoeLayerShape s{4, 3, 4, 2, 2, 3, RouterScoring::softmax, false, 0.0};
  const MoeWeights plain = random_weights(s, 40);
  const auto x = randn(static_cast<size_t>(s.tokens * s.hidden), 41);
  const MoeForward ungated = moe_forward(s, plain, x);
  s.shared_expert_gate = true;
  MoeWeights gated = plain;
  gated.shared_expert_gate.assign(static_cast<size_t>(s.hidden), 0.0);
  const MoeForward half = moe_forward(s, gated, x);
  for (size_t i = 0; i < half.out.size(); ++i) {
    EXPECT_NEAR(half.out[i], ungated.out[i] - 0.5 * half.shared_out[i], 1e-12) << i;
  }
  EXPECT_THROW(moe_forward(s, plain, x), UsageError);  // the gate's weights missing
}

TEST(MoeCpu, BadShapesAreRefused) {
  EXPECT_THROW((MoeLayerShape{4, 3, 3, 4, 2, 0, RouterScoring::softmax, true, 0.0}.validate()), UsageError);  // k > E
  EXPECT_THROW((MoeLayerShape{4, 3, 3, 0, 2, 0, RouterScoring::softmax, true, 0.0}.validate()), UsageError);
  const MoeLayerShape s{2, 2, 2, 1, 1, 0, RouterScoring::softmax, true, 0.0};
  EXPECT_THROW(moe_forward(s, random_weights(s, 1), {1.0, 2.0}), UsageError);  // x of one token, not two
}

}  // namespace
}  // namespace ub
