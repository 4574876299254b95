// CPU reference attention; the formulas are stated in attention_cpu.hpp.
#include "model/reference/attention_cpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "base/error.hpp"
#include "facts/flops.hpp"
#include "facts/packed_docs.hpp"

namespace ub {

namespace {

// Document start of every position (packed documents), so masking is one comparison.
std::vector<int64_t> start_of_each_position(const AttentionShape& s) {
  std::vector<int64_t> start(static_cast<size_t>(s.seqlen), 0);
  if (s.doc_lens.empty()) return start;
  int64_t pos = 0;
  for (int64_t len : s.doc_lens) {
    for (int64_t i = 0; i < len; ++i) start[static_cast<size_t>(pos + i)] = pos;
    pos += len;
  }
  return start;
}

// Query i may attend to key j.
bool allowed(const AttentionShape& s, const std::vector<int64_t>& start, int64_t i, int64_t j) {
  if (start[static_cast<size_t>(i)] != start[static_cast<size_t>(j)]) return false;
  if (s.window > 0 && i - j >= s.window) return false;
  return !s.causal || j <= i;
}

size_t q_index(const AttentionShape& s, int64_t b, int64_t t, int64_t h, int64_t d) {
  return static_cast<size_t>(((b * s.seqlen + t) * s.heads + h) * s.head_dim + d);
}
size_t kv_index(const AttentionShape& s, int64_t b, int64_t t, int64_t h, int64_t d) {
  return static_cast<size_t>(((b * s.seqlen + t) * s.kv_heads + h) * s.head_dim + d);
}

}  // namespace

double AttentionShape::scale() const { return 1.0 / std::sqrt(static_cast<double>(head_dim)); }

void AttentionShape::validate() const {
  if (batch <= 0 || seqlen <= 0 || heads <= 0 || kv_heads <= 0 || head_dim <= 0) {
    throw UsageError(fmt::format("attention: sizes must be positive (batch {}, seqlen {}, heads {}, kv heads {}, "
                                 "head_dim {})", batch, seqlen, heads, kv_heads, head_dim));
  }
  if (heads % kv_heads != 0) {
    throw UsageError(fmt::format("attention: {} query heads are not a multiple of {} kv heads", heads, kv_heads));
  }
  check_documents(doc_lens, seqlen, "attention");
  if (window < 0) throw UsageError(fmt::format("attention: window {} is negative", window));
  if (window > 0 && !causal) throw UsageError("attention: a sliding window is causal; give causal attention with it");
}

AttentionForward attention_forward(const AttentionShape& s, const std::vector<double>& q,
                                   const std::vector<double>& k, const std::vector<double>& v) {
  s.validate();
  const auto start = start_of_each_position(s);
  const int64_t group = s.heads / s.kv_heads;
  AttentionForward f;
  f.out.assign(s.q_elems(), 0.0);
  f.lse.assign(static_cast<size_t>(s.batch * s.heads * s.seqlen), 0.0);
  std::vector<double> scores(static_cast<size_t>(s.seqlen));
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t hk = h / group;
      for (int64_t i = 0; i < s.seqlen; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < s.seqlen; ++j) {
          double x = -std::numeric_limits<double>::infinity();
          if (allowed(s, start, i, j)) {
            x = 0;
            for (int64_t d = 0; d < s.head_dim; ++d) x += q[q_index(s, b, i, h, d)] * k[kv_index(s, b, j, hk, d)];
            x *= s.scale();
          }
          scores[static_cast<size_t>(j)] = x;
          mx = std::max(mx, x);
        }
        double sum = 0;
        for (int64_t j = 0; j < s.seqlen; ++j) {
          const double e = allowed(s, start, i, j) ? std::exp(scores[static_cast<size_t>(j)] - mx) : 0.0;
          scores[static_cast<size_t>(j)] = e;
          sum += e;
        }
        f.lse[static_cast<size_t>((b * s.heads + h) * s.seqlen + i)] = mx + std::log(sum);
        for (int64_t j = 0; j < s.seqlen; ++j) {
          const double p = scores[static_cast<size_t>(j)] / sum;
          if (p == 0) continue;
          for (int64_t d = 0; d < s.head_dim; ++d) f.out[q_index(s, b, i, h, d)] += p * v[kv_index(s, b, j, hk, d)];
        }
      }
    }
  }
  return f;
}

AttentionGrads attention_backward(const AttentionShape& s, const std::vector<double>& q,
                                  const std::vector<double>& k, const std::vector<double>& v,
                                  const AttentionForward& fwd, const std::vector<double>& dout) {
  s.validate();
  const auto start = start_of_each_position(s);
  const int64_t group = s.heads / s.kv_heads;
  AttentionGrads g;
  g.dq.assign(s.q_elems(), 0.0);
  g.dk.assign(s.kv_elems(), 0.0);
  g.dv.assign(s.kv_elems(), 0.0);
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t hk = h / group;
      for (int64_t i = 0; i < s.seqlen; ++i) {
        const double lse = fwd.lse[static_cast<size_t>((b * s.heads + h) * s.seqlen + i)];
        double delta = 0;  // rowsum(dO * O)
        for (int64_t d = 0; d < s.head_dim; ++d) delta += dout[q_index(s, b, i, h, d)] * fwd.out[q_index(s, b, i, h, d)];
        for (int64_t j = 0; j < s.seqlen; ++j) {
          if (!allowed(s, start, i, j)) continue;
          double x = 0;
          for (int64_t d = 0; d < s.head_dim; ++d) x += q[q_index(s, b, i, h, d)] * k[kv_index(s, b, j, hk, d)];
          const double p = std::exp(x * s.scale() - lse);
          double dp = 0;
          for (int64_t d = 0; d < s.head_dim; ++d) {
            g.dv[kv_index(s, b, j, hk, d)] += p * dout[q_index(s, b, i, h, d)];
            dp += dout[q_index(s, b, i, h, d)] * v[kv_index(s, b, j, hk, d)];
          }
          const double ds = p * (dp - delta) * s.scale();
          for (int64_t d = 0; d < s.head_dim; ++d) {
            g.dq[q_index(s, b, i, h, d)] += ds * k[kv_index(s, b, j, hk, d)];
            g.dk[kv_index(s, b, j, hk, d)] += ds * q[q_index(s, b, i, h, d)];
          }
        }
      }
    }
  }
  return g;
}

double attention_flops(const AttentionShape& s, bool with_backward) {
  double squares = 0;
  for (int64_t len : s.doc_lens.empty() ? std::vector<int64_t>{s.seqlen} : s.doc_lens) {
    squares += causal_attention_squares(len, s.causal ? s.window : 0);
  }
  double f = 4.0 * static_cast<double>(s.batch) * squares * static_cast<double>(s.heads) *
             static_cast<double>(s.head_dim);
  if (s.causal) f /= 2.0;
  return with_backward ? 3.5 * f : f;
}

}  // namespace ub
