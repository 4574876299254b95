// The CPU reference attention: hand-computed tiny cases, gradients against finite differences
// (causal, GQA, packed, windowed), packed documents equal to separate sequences, a sliding window
// against brute force and against full attention when it holds the whole sequence, the FLOP convention.
#include "model/reference/attention_cpu.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "base/error.hpp"
#include "random_values.hpp"

namespace ub {
namespace {

TEST(AttentionCpu, OneTokenReturnsItsValue) {
  AttentionShape s{1, 1, 2, 1, 3, true, {}};
  const std::vector<double> q = {1, 2, 3, 4, 5, 6}, k = {0.5, -1, 2}, v = {7, 8, 9};
  const AttentionForward f = attention_forward(s, q, k, v);
  EXPECT_EQ(f.out, (std::vector<double>{7, 8, 9, 7, 8, 9}));
  EXPECT_NEAR(f.lse[0], (1 * 0.5 - 2 + 6) / std::sqrt(3.0), 1e-12);
}

TEST(AttentionCpu, TwoTokensByHand) {
  // head_dim 1, scale 1: non-causal, query 0 sees keys 0 and 1 with scores 1*1 and 1*2.
  AttentionShape s{1, 2, 1, 1, 1, false, {}};
  const AttentionForward f = attention_forward(s, {1, 0}, {1, 2}, {10, 20});
  const double p0 = std::exp(1.0) / (std::exp(1.0) + std::exp(2.0));
  EXPECT_NEAR(f.out[0], p0 * 10 + (1 - p0) * 20, 1e-12);
  EXPECT_NEAR(f.out[1], 15.0, 1e-12);  // query 0 -> scores 0, 0 -> mean of the values
  s.causal = true;
  EXPECT_NEAR(attention_forward(s, {1, 0}, {1, 2}, {10, 20}).out[0], 10.0, 1e-12);
}

class AttentionGrad : public ::testing::TestWithParam<AttentionShape> {};

TEST_P(AttentionGrad, MatchesFiniteDifferences) {
  const AttentionShape s = GetParam();
  auto q = randn(s.q_elems(), 1), k = randn(s.kv_elems(), 2), v = randn(s.kv_elems(), 3);
  const auto dout = randn(s.q_elems(), 4);
  const AttentionForward f = attention_forward(s, q, k, v);
  const AttentionGrads g = attention_backward(s, q, k, v, f, dout);
  auto loss = [&](const std::vector<double>& qq, const std::vector<double>& kk, const std::vector<double>& vv) {
    const auto o = attention_forward(s, qq, kk, vv).out;
    double l = 0;
    for (size_t i = 0; i < o.size(); ++i) l += o[i] * dout[i];
    return l;
  };
  const double h = 1e-6;
  auto check = [&](std::vector<double>& x, const std::vector<double>& grad, const char* name) {
    for (size_t i = 0; i < x.size(); ++i) {
      const double keep = x[i];
      x[i] = keep + h;
      const double up = loss(q, k, v);
      x[i] = keep - h;
      const double down = loss(q, k, v);
      x[i] = keep;
      EXPECT_NEAR(grad[i], (up - down) / (2 * h), 1e-6) << name << "[" << i << "]";
    }
  };
  check(q, g.dq, "dq");
  check(k, g.dk, "dk");
  check(v, g.dv, "dv");
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionGrad,
                         ::testing::Values(AttentionShape{1, 5, 4, 2, 3, true, {}},
                                           AttentionShape{2, 4, 2, 2, 4, false, {}},
                                           AttentionShape{1, 6, 4, 1, 2, true, {2, 4}},
                                           AttentionShape{1, 7, 2, 1, 3, true, {}, 3},
                                           AttentionShape{1, 7, 4, 2, 2, true, {3, 4}, 2}));

TEST(AttentionCpu, WindowMatchesBruteForce) {
  // Query i sees keys i - w < j <= i: a softmax over at most w keys, written out here.
  const AttentionShape s{2, 9, 2, 1, 3, true, {}, 4};
  const auto q = randn(s.q_elems(), 31), k = randn(s.kv_elems(), 32), v = randn(s.kv_elems(), 33);
  const auto out = attention_forward(s, q, k, v).out;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      for (int64_t i = 0; i < s.seqlen; ++i) {
        const int64_t first = std::max<int64_t>(0, i - s.window + 1);
        std::vector<double> p;
        double sum = 0;
        for (int64_t j = first; j <= i; ++j) {
          double x = 0;
          for (int64_t d = 0; d < 3; ++d) x += q[static_cast<size_t>(((b * 9 + i) * 2 + h) * 3 + d)] * k[static_cast<size_t>((b * 9 + j) * 3 + d)];
          p.push_back(std::exp(x / std::sqrt(3.0)));
          sum += p.back();
        }
        for (int64_t d = 0; d < 3; ++d) {
          double o = 0;
          for (int64_t j = first; j <= i; ++j) o += p[static_cast<size_t>(j - first)] / sum * v[static_cast<size_t>((b * 9 + j) * 3 + d)];
          EXPECT_NEAR(out[static_cast<size_t>(((b * 9 + i) * 2 + h) * 3 + d)], o, 1e-12) << b << " " << h << " " << i;
        }
      }
    }
  }
}

TEST(AttentionCpu, WindowHoldingTheSequenceIsFullAttention) {
  const AttentionShape full{1, 6, 2, 2, 4, true, {}};
  const auto q = randn(full.q_elems(), 41), k = randn(full.kv_elems(), 42), v = randn(full.kv_elems(), 43);
  const auto dout = randn(full.q_elems(), 44);
  const AttentionForward f = attention_forward(full, q, k, v);
  const AttentionGrads g = attention_backward(full, q, k, v, f, dout);
  for (int64_t w : {6, 7, 100}) {
    AttentionShape windowed = full;
    windowed.window = w;
    const AttentionForward fw = attention_forward(windowed, q, k, v);
    EXPECT_EQ(fw.out, f.out) << "window " << w;
    EXPECT_EQ(attention_backward(windowed, q, k, v, fw, dout).dq, g.dq) << "window " << w;
  }
  AttentionShape narrow = full;
  narrow.window = 5;  // the last query loses its first key
  EXPECT_NE(attention_forward(narrow, q, k, v).out, f.out);
}

TEST(AttentionCpu, PackedEqualsSeparateSequences) {
  // Documents of 2 and 3 tokens packed in one sequence give what two separate runs give.
  const AttentionShape packed{1, 5, 2, 1, 4, true, {2, 3}};
  const auto q = randn(packed.q_elems(), 7), k = randn(packed.kv_elems(), 8), v = randn(packed.kv_elems(), 9);
  const auto out = attention_forward(packed, q, k, v).out;
  const int64_t per_token_q = 2 * 4, per_token_kv = 1 * 4;
  int64_t offset = 0;
  for (int64_t len : {2, 3}) {
    const AttentionShape one{1, len, 2, 1, 4, true, {}};
    const auto sub = [&](const std::vector<double>& x, int64_t w) {
      return std::vector<double>(x.begin() + offset * w, x.begin() + (offset + len) * w);
    };
    const auto o = attention_forward(one, sub(q, per_token_q), sub(k, per_token_kv), sub(v, per_token_kv)).out;
    for (size_t i = 0; i < o.size(); ++i) EXPECT_NEAR(out[static_cast<size_t>(offset * per_token_q) + i], o[i], 1e-12);
    offset += len;
  }
}

TEST(AttentionCpu, FlopConvention) {
  // Llama-3.1-8B attention at 8k, causal: 4 * 8192^2 * 32 * 128 / 2.
  AttentionShape s{1, 8192, 32, 8, 128, true, {}};
  EXPECT_DOUBLE_EQ(attention_flops(s, false), 4.0 * 8192 * 8192 * 32 * 128 / 2);
  EXPECT_DOUBLE_EQ(attention_flops(s, true), 3.5 * attention_flops(s, false));
  s.causal = false;
  EXPECT_DOUBLE_EQ(attention_flops(s, false), 4.0 * 8192 * 8192 * 32 * 128);
  // 32 documents of 8k packed in 256k: 32x fewer FLOPs than one 256k sequence.
  AttentionShape one{1, 262144, 32, 8, 128, true, {}};
  AttentionShape packed = one;
  packed.doc_lens.assign(32, 8192);
  EXPECT_DOUBLE_EQ(attention_flops(one, false) / attention_flops(packed, false), 32.0);
  // A window of half the sequence: s*w - w^2/2 key positions, three quarters of s^2/2.
  AttentionShape windowed{1, 8192, 32, 8, 128, true, {}, 4096};
  EXPECT_DOUBLE_EQ(attention_flops(windowed, false), 0.75 * 4.0 * 8192 * 8192 * 32 * 128 / 2);
}

TEST(AttentionCpu, BadShapesAreRefused) {
  EXPECT_THROW((AttentionShape{1, 4, 3, 2, 4, true, {}}.validate()), UsageError);  // 3 heads, 2 kv
  EXPECT_THROW((AttentionShape{1, 4, 2, 2, 0, true, {}}.validate()), UsageError);
  EXPECT_THROW((AttentionShape{1, 4, 2, 2, 4, true, {1, 2}}.validate()), UsageError);  // sums to 3
  EXPECT_THROW((AttentionShape{1, 4, 2, 2, 4, false, {}, 2}.validate()), UsageError);  // a window is causal
  EXPECT_THROW((AttentionShape{1, 4, 2, 2, 4, true, {}, -1}.validate()), UsageError);
}

}  // namespace
}  // namespace ub
