// CPU reference of an MoE MLP layer; the formulas are stated in moe_cpu.hpp.
#include "model/reference/moe_cpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/error.hpp"

namespace ub {

namespace {

using Vec = std::vector<double>;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double silu(double x) { return x * sigmoid(x); }
double silu_grad(double x) { return sigmoid(x) * (1.0 + x * (1.0 - sigmoid(x))); }

// Row `row` of a row-major matrix of `cols` columns, at element offset `base`.
const double* row_of(const Vec& m, size_t base, int64_t row, int64_t cols) {
  return m.data() + base + static_cast<size_t>(row * cols);
}

double dot(const double* a, const double* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

void softmax_row(const double* logits, double* out, int64_t n) {
  const double mx = *std::max_element(logits, logits + n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += out[i] = std::exp(logits[i] - mx);
  for (int64_t i = 0; i < n; ++i) out[i] /= sum;
}

void check_size(const Vec& v, int64_t want, const char* what) {
  if (static_cast<int64_t>(v.size()) != want) {
    throw UsageError(fmt::format("moe reference: {} has {} elements, the shape needs {}", what, v.size(), want));
  }
}

void check_weights(const MoeLayerShape& s, const MoeWeights& w) {
  const int64_t H = s.hidden, E = s.experts, I = s.intermediate, Is = s.shared_intermediate;
  check_size(w.router, E * H, "router");
  check_size(w.gate, E * I * H, "gate");
  check_size(w.up, E * I * H, "up");
  check_size(w.down, E * H * I, "down");
  check_size(w.shared_gate, Is * H, "shared_gate");
  check_size(w.shared_up, Is * H, "shared_up");
  check_size(w.shared_down, H * Is, "shared_down");
  check_size(w.shared_expert_gate, s.shared_expert_gate ? H : 0, "shared_expert_gate");
}

// Router logits, scores, each token's top_k experts and their weights.
void route(const MoeLayerShape& s, const MoeWeights& w, const Vec& x, MoeForward& f) {
  const int64_t T = s.tokens, H = s.hidden, E = s.experts, K = s.top_k;
  f.logits.assign(static_cast<size_t>(T * E), 0.0);
  f.probs.assign(f.logits.size(), 0.0);
  f.chosen.assign(static_cast<size_t>(T * K), 0);
  f.weights.assign(static_cast<size_t>(T * K), 0.0);
  std::vector<int64_t> idx(static_cast<size_t>(E));
  for (int64_t t = 0; t < T; ++t) {
    double* lg = f.logits.data() + t * E;
    double* p = f.probs.data() + t * E;
    for (int64_t e = 0; e < E; ++e) lg[e] = dot(row_of(w.router, 0, e, H), row_of(x, 0, t, H), H);
    if (s.scoring == RouterScoring::softmax) softmax_row(lg, p, E);
    else for (int64_t e = 0; e < E; ++e) p[e] = sigmoid(lg[e]);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return p[a] > p[b]; });
    double sum = 0;
    for (int64_t i = 0; i < K; ++i) sum += p[idx[static_cast<size_t>(i)]];
    for (int64_t i = 0; i < K; ++i) {
      const int64_t e = idx[static_cast<size_t>(i)];
      f.chosen[static_cast<size_t>(t * K + i)] = e;
      f.weights[static_cast<size_t>(t * K + i)] = s.normalize_top_k ? p[e] / sum : p[e];
    }
  }
}

// The permutation: every (token, slot) as a row, grouped by expert, token order kept within one.
void permute(const MoeLayerShape& s, MoeForward& f) {
  const int64_t E = s.experts, slots = s.tokens * s.top_k;
  f.offsets.assign(static_cast<size_t>(E + 1), 0);
  f.order.clear();
  for (int64_t e = 0; e < E; ++e) {
    for (int64_t slot = 0; slot < slots; ++slot) {
      if (f.chosen[static_cast<size_t>(slot)] == e) f.order.push_back(slot);
    }
    f.offsets[static_cast<size_t>(e + 1)] = static_cast<int64_t>(f.order.size());
  }
}

// y = Wd (silu(Wg x) * Wu x) for one row; keeps the pre-activations in g and u.
void swiglu(const double* x, const Vec& wg, const Vec& wu, const Vec& wd, size_t base_in, size_t base_down,
            int64_t H, int64_t I, double* g, double* u, double* y) {
  for (int64_t j = 0; j < I; ++j) {
    g[j] = dot(row_of(wg, base_in, j, H), x, H);
    u[j] = dot(row_of(wu, base_in, j, H), x, H);
  }
  for (int64_t h = 0; h < H; ++h) {
    const double* d = row_of(wd, base_down, h, I);
    y[h] = 0;
    for (int64_t j = 0; j < I; ++j) y[h] += d[j] * silu(g[j]) * u[j];
  }
}

// Backward of swiglu for one row given dy: accumulates the weight gradients and dx.
void swiglu_backward(const double* x, const double* g, const double* u, const double* dy, const Vec& wg,
                     const Vec& wu, const Vec& wd, MoeWeights& dw, Vec MoeWeights::*dg_of, Vec MoeWeights::*du_of,
                     Vec MoeWeights::*dd_of, size_t base_in, size_t base_down, int64_t H, int64_t I, double* dx) {
  for (int64_t j = 0; j < I; ++j) {
    double da = 0;
    for (int64_t h = 0; h < H; ++h) {
      da += row_of(wd, base_down, h, I)[j] * dy[h];
      (dw.*dd_of)[base_down + static_cast<size_t>(h * I + j)] += dy[h] * silu(g[j]) * u[j];
    }
    const double dg = da * u[j] * silu_grad(g[j]), du = da * silu(g[j]);
    for (int64_t c = 0; c < H; ++c) {
      (dw.*dg_of)[base_in + static_cast<size_t>(j * H + c)] += dg * x[c];
      (dw.*du_of)[base_in + static_cast<size_t>(j * H + c)] += du * x[c];
      dx[c] += row_of(wg, base_in, j, H)[c] * dg + row_of(wu, base_in, j, H)[c] * du;
    }
  }
}

// softmax(logits) per token, whatever the scoring: the P of the load-balancing loss.
Vec softmax_probs(const MoeLayerShape& s, const MoeForward& f) {
  if (s.scoring == RouterScoring::softmax) return f.probs;
  Vec q(f.logits.size());
  for (int64_t t = 0; t < s.tokens; ++t) softmax_row(f.logits.data() + t * s.experts, q.data() + t * s.experts, s.experts);
  return q;
}

double load_balancing_loss(const MoeLayerShape& s, const MoeForward& f) {
  const Vec q = softmax_probs(s, f);
  const double T = static_cast<double>(s.tokens);
  double aux = 0;
  for (int64_t e = 0; e < s.experts; ++e) {
    double p = 0;
    for (int64_t t = 0; t < s.tokens; ++t) p += q[static_cast<size_t>(t * s.experts + e)];
    const double routed = static_cast<double>(f.offsets[static_cast<size_t>(e + 1)] - f.offsets[static_cast<size_t>(e)]);
    aux += routed / T * (p / T);
  }
  return static_cast<double>(s.experts) * aux;
}

}  // namespace

void MoeLayerShape::validate() const {
  if (tokens <= 0 || hidden <= 0 || experts <= 0 || intermediate <= 0 || shared_intermediate < 0) {
    throw UsageError(fmt::format("moe reference: sizes must be positive (tokens {}, hidden {}, experts {}, "
                                 "intermediate {}, shared {})", tokens, hidden, experts, intermediate, shared_intermediate));
  }
  if (top_k < 1 || top_k > experts) {
    throw UsageError(fmt::format("moe reference: top_k {} is outside 1..{} experts", top_k, experts));
  }
}

MoeForward moe_forward(const MoeLayerShape& s, const MoeWeights& w, const Vec& x) {
  s.validate();
  check_weights(s, w);
  check_size(x, s.tokens * s.hidden, "x");
  const int64_t H = s.hidden, I = s.intermediate, Is = s.shared_intermediate, K = s.top_k;
  MoeForward f;
  route(s, w, x, f);
  permute(s, f);
  const size_t rows = f.order.size();
  f.gate.assign(rows * static_cast<size_t>(I), 0.0);
  f.up.assign(f.gate.size(), 0.0);
  f.expert_out.assign(rows * static_cast<size_t>(H), 0.0);
  f.out.assign(static_cast<size_t>(s.tokens * H), 0.0);
  for (size_t r = 0; r < rows; ++r) {
    const int64_t slot = f.order[r], t = slot / K, e = f.chosen[static_cast<size_t>(slot)];
    double* y = f.expert_out.data() + r * static_cast<size_t>(H);
    swiglu(row_of(x, 0, t, H), w.gate, w.up, w.down, static_cast<size_t>(e * I * H), static_cast<size_t>(e * H * I), H,
           I, f.gate.data() + r * static_cast<size_t>(I), f.up.data() + r * static_cast<size_t>(I), y);
    for (int64_t h = 0; h < H; ++h) f.out[static_cast<size_t>(t * H + h)] += f.weights[static_cast<size_t>(slot)] * y[h];
  }
  f.shared_gate.assign(static_cast<size_t>(s.tokens * Is), 0.0);
  f.shared_up.assign(f.shared_gate.size(), 0.0);
  f.shared_out.assign(static_cast<size_t>(Is > 0 ? s.tokens * H : 0), 0.0);
  if (Is > 0 && s.shared_expert_gate) f.shared_scale.assign(static_cast<size_t>(s.tokens), 0.0);
  for (int64_t t = 0; Is > 0 && t < s.tokens; ++t) {
    double* y = f.shared_out.data() + t * H;
    swiglu(row_of(x, 0, t, H), w.shared_gate, w.shared_up, w.shared_down, 0, 0, H, Is,
           f.shared_gate.data() + t * Is, f.shared_up.data() + t * Is, y);
    double scale = 1.0;
    if (s.shared_expert_gate) {
      scale = 1.0 / (1.0 + std::exp(-dot(row_of(x, 0, t, H), w.shared_expert_gate.data(), H)));
      f.shared_scale[static_cast<size_t>(t)] = scale;
    }
    for (int64_t h = 0; h < H; ++h) f.out[static_cast<size_t>(t * H + h)] += scale * y[h];
  }
  f.aux = load_balancing_loss(s, f);
  return f;
}

namespace {

MoeWeights zeros_like(const MoeWeights& w) {
  auto z = [](const Vec& v) { return Vec(v.size(), 0.0); };
  return {z(w.router),      z(w.gate),      z(w.up),          z(w.down),
          z(w.shared_gate), z(w.shared_up), z(w.shared_down), z(w.shared_expert_gate)};
}

// dL/dprobs from dL/dweights of each token's slots (through the renormalisation when on).
Vec probs_grad(const MoeLayerShape& s, const MoeForward& f, const Vec& dweights) {
  const int64_t E = s.experts, K = s.top_k;
  Vec dp(f.probs.size(), 0.0);
  for (int64_t t = 0; t < s.tokens; ++t) {
    double sum = 0, dot_w = 0;
    for (int64_t i = 0; i < K; ++i) {
      const size_t slot = static_cast<size_t>(t * K + i);
      sum += f.probs[static_cast<size_t>(t * E + f.chosen[slot])];
      dot_w += dweights[slot] * f.weights[slot];
    }
    for (int64_t i = 0; i < K; ++i) {
      const size_t slot = static_cast<size_t>(t * K + i);
      dp[static_cast<size_t>(t * E + f.chosen[slot])] += s.normalize_top_k ? (dweights[slot] - dot_w) / sum : dweights[slot];
    }
  }
  return dp;
}

// dL/dlogits: through the scores, plus aux_loss_coef times the load-balancing loss's gradient,
// E / T^2 * q_j * (c_j - sum_e c_e q_e) with q = softmax(logits) and c the rows per expert.
Vec logits_grad(const MoeLayerShape& s, const MoeForward& f, const Vec& dp) {
  const int64_t E = s.experts;
  const Vec q = softmax_probs(s, f);
  const double aux_scale = s.aux_loss_coef * static_cast<double>(E) / static_cast<double>(s.tokens * s.tokens);
  Vec dl(f.logits.size(), 0.0);
  for (int64_t t = 0; t < s.tokens; ++t) {
    const double* p = f.probs.data() + t * E;
    const double* g = dp.data() + t * E;
    const double* qt = q.data() + t * E;
    double pg = 0, cq = 0;
    for (int64_t e = 0; e < E; ++e) {
      pg += p[e] * g[e];
      cq += static_cast<double>(f.offsets[static_cast<size_t>(e + 1)] - f.offsets[static_cast<size_t>(e)]) * qt[e];
    }
    for (int64_t j = 0; j < E; ++j) {
      double d = s.scoring == RouterScoring::softmax ? p[j] * (g[j] - pg) : g[j] * p[j] * (1.0 - p[j]);
      const double c = static_cast<double>(f.offsets[static_cast<size_t>(j + 1)] - f.offsets[static_cast<size_t>(j)]);
      d += aux_scale * qt[j] * (c - cq);
      dl[static_cast<size_t>(t * E + j)] = d;
    }
  }
  return dl;
}

}  // namespace

MoeGrads moe_backward(const MoeLayerShape& s, const MoeWeights& w, const Vec& x, const MoeForward& f, const Vec& dout) {
  s.validate();
  check_weights(s, w);
  check_size(dout, s.tokens * s.hidden, "dout");
  const int64_t H = s.hidden, I = s.intermediate, Is = s.shared_intermediate, K = s.top_k, E = s.experts;
  MoeGrads g{Vec(x.size(), 0.0), zeros_like(w)};
  Vec dweights(f.weights.size(), 0.0), dy(static_cast<size_t>(H));
  for (size_t r = 0; r < f.order.size(); ++r) {
    const int64_t slot = f.order[r], t = slot / K, e = f.chosen[static_cast<size_t>(slot)];
    const double* d = row_of(dout, 0, t, H);
    dweights[static_cast<size_t>(slot)] = dot(d, f.expert_out.data() + r * static_cast<size_t>(H), H);
    for (int64_t h = 0; h < H; ++h) dy[static_cast<size_t>(h)] = f.weights[static_cast<size_t>(slot)] * d[h];
    swiglu_backward(row_of(x, 0, t, H), f.gate.data() + r * static_cast<size_t>(I), f.up.data() + r * static_cast<size_t>(I),
                    dy.data(), w.gate, w.up, w.down, g.dw, &MoeWeights::gate, &MoeWeights::up, &MoeWeights::down,
                    static_cast<size_t>(e * I * H), static_cast<size_t>(e * H * I), H, I, g.dx.data() + t * H);
  }
  for (int64_t t = 0; Is > 0 && t < s.tokens; ++t) {
    const double* d = row_of(dout, 0, t, H);
    const double* xt = row_of(x, 0, t, H);
    if (s.shared_expert_gate) {
      // out += g * y, g = sigmoid(x . w_sg): dy = g * dout, and dout . y through the sigmoid to w_sg and x.
      const double scale = f.shared_scale[static_cast<size_t>(t)];
      const double dpre = scale * (1.0 - scale) * dot(d, f.shared_out.data() + t * H, H);
      for (int64_t h = 0; h < H; ++h) {
        dy[static_cast<size_t>(h)] = scale * d[h];
        g.dw.shared_expert_gate[static_cast<size_t>(h)] += dpre * xt[h];
        g.dx[static_cast<size_t>(t * H + h)] += dpre * w.shared_expert_gate[static_cast<size_t>(h)];
      }
      d = dy.data();
    }
    swiglu_backward(xt, f.shared_gate.data() + t * Is, f.shared_up.data() + t * Is, d, w.shared_gate, w.shared_up,
                    w.shared_down, g.dw, &MoeWeights::shared_gate, &MoeWeights::shared_up, &MoeWeights::shared_down, 0, 0,
                    H, Is, g.dx.data() + t * H);
  }
  const Vec dl = logits_grad(s, f, probs_grad(s, f, dweights));
  for (int64_t t = 0; t < s.tokens; ++t) {
    for (int64_t e = 0; e < E; ++e) {
      const double d = dl[static_cast<size_t>(t * E + e)];
      for (int64_t c = 0; c < H; ++c) {
        g.dw.router[static_cast<size_t>(e * H + c)] += d * x[static_cast<size_t>(t * H + c)];
        g.dx[static_cast<size_t>(t * H + c)] += w.router[static_cast<size_t>(e * H + c)] * d;
      }
    }
  }
  return g;
}

ExpertLoad expert_load(const MoeForward& f) {
  std::vector<int64_t> n;
  for (size_t e = 0; e + 1 < f.offsets.size(); ++e) n.push_back(f.offsets[e + 1] - f.offsets[e]);
  if (n.empty()) return {};
  std::sort(n.begin(), n.end());
  const size_t m = n.size() / 2;
  const double median = n.size() % 2 ? static_cast<double>(n[m]) : (static_cast<double>(n[m - 1]) + static_cast<double>(n[m])) / 2.0;
  return {n.front(), n.back(), median};
}

}  // namespace ub
