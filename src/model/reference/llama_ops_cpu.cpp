// CPU reference operations; see llama_ops_cpu.hpp. Plain loops, written for clarity.
#include "model/reference/llama_ops_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/train_math.hpp"

namespace ub::cpu_ops {

Vec linear(const Vec& x, const double* w, int64_t T, int64_t in, int64_t out) {
  Vec y(static_cast<size_t>(T * out), 0.0);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t o = 0; o < out; ++o) {
      double s = 0;
      for (int64_t i = 0; i < in; ++i) s += x[t * in + i] * w[o * in + i];
      y[t * out + o] = s;
    }
  }
  return y;
}

Vec linear_backward(const Vec& dy, const Vec& x, const double* w, double* dw, int64_t T, int64_t in, int64_t out) {
  Vec dx(static_cast<size_t>(T * in), 0.0);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t o = 0; o < out; ++o) {
      const double g = dy[t * out + o];
      if (g == 0) continue;
      for (int64_t i = 0; i < in; ++i) {
        dx[t * in + i] += g * w[o * in + i];
        dw[o * in + i] += g * x[t * in + i];
      }
    }
  }
  return dx;
}

Norm rmsnorm(const Vec& x, const double* w, int64_t T, int64_t H, double eps) {
  Norm n{Vec(x.size()), Vec(static_cast<size_t>(T))};
  for (int64_t t = 0; t < T; ++t) {
    double ss = 0;
    for (int64_t i = 0; i < H; ++i) ss += x[t * H + i] * x[t * H + i];
    const double r = 1.0 / std::sqrt(ss / static_cast<double>(H) + eps);
    n.rstd[t] = r;
    for (int64_t i = 0; i < H; ++i) n.y[t * H + i] = w[i] * x[t * H + i] * r;
  }
  return n;
}

Vec rmsnorm_backward(const Vec& dy, const Vec& x, const double* w, const Vec& rstd, double* dw, int64_t T, int64_t H) {
  Vec dx(x.size());
  for (int64_t t = 0; t < T; ++t) {
    const double r = rstd[t];
    double dot = 0;
    for (int64_t i = 0; i < H; ++i) dot += dy[t * H + i] * w[i] * x[t * H + i] * r;
    dot /= static_cast<double>(H);
    for (int64_t i = 0; i < H; ++i) {
      const double xhat = x[t * H + i] * r;
      dx[t * H + i] = r * (dy[t * H + i] * w[i] - xhat * dot);
      dw[i] += dy[t * H + i] * xhat;
    }
  }
  return dx;
}

namespace {

// The heads of kind `keys` (else queries) of qkv [T, (nq + 2 nk) d] as rows [T * n, d], and back.
Vec gather_heads(const Vec& qkv, const HeadDims& h, bool keys) {
  const int64_t n = keys ? h.nk : h.nq, first = keys ? h.nq : 0, width = h.width();
  Vec rows(static_cast<size_t>(h.T * n * h.d));
  for (int64_t t = 0; t < h.T; ++t) {
    for (int64_t j = 0; j < n * h.d; ++j) rows[t * n * h.d + j] = qkv[t * width + first * h.d + j];
  }
  return rows;
}

void scatter_heads(const Vec& rows, Vec& qkv, const HeadDims& h, bool keys) {
  const int64_t n = keys ? h.nk : h.nq, first = keys ? h.nq : 0, width = h.width();
  for (int64_t t = 0; t < h.T; ++t) {
    for (int64_t j = 0; j < n * h.d; ++j) qkv[t * width + first * h.d + j] = rows[t * n * h.d + j];
  }
}

}  // namespace

QkNorm qk_norm(const Vec& qkv, const double* q_w, const double* k_w, const HeadDims& h, double eps) {
  QkNorm out{qkv, {}, {}};
  Norm q = rmsnorm(gather_heads(qkv, h, false), q_w, h.T * h.nq, h.d, eps);
  Norm k = rmsnorm(gather_heads(qkv, h, true), k_w, h.T * h.nk, h.d, eps);
  scatter_heads(q.y, out.y, h, false);
  scatter_heads(k.y, out.y, h, true);
  out.q_rstd = std::move(q.rstd), out.k_rstd = std::move(k.rstd);
  return out;
}

Vec qk_norm_backward(const Vec& dy, const Vec& qkv, const double* q_w, const double* k_w, const QkNorm& n,
                     double* dq_w, double* dk_w, const HeadDims& h) {
  Vec dx = dy;  // the values' gradient passes as it is
  scatter_heads(rmsnorm_backward(gather_heads(dy, h, false), gather_heads(qkv, h, false), q_w, n.q_rstd, dq_w,
                                 h.T * h.nq, h.d), dx, h, false);
  scatter_heads(rmsnorm_backward(gather_heads(dy, h, true), gather_heads(qkv, h, true), k_w, n.k_rstd, dk_w,
                                 h.T * h.nk, h.d), dx, h, true);
  return dx;
}

namespace {
// Rotates heads [0, nq + nk) of one token's row of width (nq + 2 nk) d in place.
void rotate_row(double* row, const HeadDims& h, const RopeTable& tab, int64_t pos, bool backward) {
  const int64_t half = h.d / 2;
  for (int64_t head = 0; head < h.nq + h.nk; ++head) {
    double* v = row + head * h.d;
    for (int64_t i = 0; i < half; ++i) {
      const double c = tab.cos[pos * half + i], s = tab.sin[pos * half + i];
      const Pair<double> r = backward ? rope_rotate_backward(v[i], v[i + half], c, s) : rope_rotate(v[i], v[i + half], c, s);
      v[i] = r.a, v[i + half] = r.b;
    }
  }
}
}  // namespace

Qkv rope_split(const Vec& qkv, const HeadDims& h, const RopeTable& tab) {
  const int64_t q = h.nq * h.d, kv = h.nk * h.d;
  Qkv out{Vec(static_cast<size_t>(h.T * q)), Vec(static_cast<size_t>(h.T * kv)), Vec(static_cast<size_t>(h.T * kv))};
  Vec row(static_cast<size_t>(h.width()));
  for (int64_t t = 0; t < h.T; ++t) {
    std::copy(qkv.begin() + t * h.width(), qkv.begin() + (t + 1) * h.width(), row.begin());
    rotate_row(row.data(), h, tab, t % h.S, false);
    std::copy(row.begin(), row.begin() + q, out.q.begin() + t * q);
    std::copy(row.begin() + q, row.begin() + q + kv, out.k.begin() + t * kv);
    std::copy(row.begin() + q + kv, row.end(), out.v.begin() + t * kv);
  }
  return out;
}

Vec rope_join_backward(const Qkv& g, const HeadDims& h, const RopeTable& tab) {
  const int64_t q = h.nq * h.d, kv = h.nk * h.d;
  Vec out(static_cast<size_t>(h.T * h.width()));
  for (int64_t t = 0; t < h.T; ++t) {
    double* row = out.data() + t * h.width();
    std::copy(g.q.begin() + t * q, g.q.begin() + (t + 1) * q, row);
    std::copy(g.k.begin() + t * kv, g.k.begin() + (t + 1) * kv, row + q);
    std::copy(g.v.begin() + t * kv, g.v.begin() + (t + 1) * kv, row + q + kv);
    rotate_row(row, h, tab, t % h.S, true);
  }
  return out;
}

Vec swiglu(const Vec& gu, int64_t T, int64_t I) {
  Vec h(static_cast<size_t>(T * I));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t i = 0; i < I; ++i) h[t * I + i] = silu(gu[t * 2 * I + i]) * gu[t * 2 * I + I + i];
  }
  return h;
}

Vec swiglu_backward(const Vec& dh, const Vec& gu, int64_t T, int64_t I) {
  Vec dgu(gu.size());
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t i = 0; i < I; ++i) {
      const double g = gu[t * 2 * I + i], u = gu[t * 2 * I + I + i], d = dh[t * I + i];
      dgu[t * 2 * I + i] = d * u * silu_grad(g);
      dgu[t * 2 * I + I + i] = d * silu(g);
    }
  }
  return dgu;
}

CrossEntropy cross_entropy(const Vec& logits, const std::vector<int32_t>& tokens, int64_t T, int64_t S, int64_t V) {
  CrossEntropy ce{0, Vec(static_cast<size_t>(T), 0.0), Vec(logits.size(), 0.0)};
  const double count = static_cast<double>((T / S) * (S - 1));
  for (int64_t t = 0; t < T; ++t) {
    if (t % S == S - 1) continue;  // the last position predicts nothing
    const double* z = logits.data() + t * V;
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < V; ++j) mx = std::max(mx, z[j]);
    double sum = 0;
    for (int64_t j = 0; j < V; ++j) sum += std::exp(z[j] - mx);
    const int32_t label = tokens[static_cast<size_t>(t + 1)];
    ce.row_loss[t] = mx + std::log(sum) - z[label];
    ce.loss += ce.row_loss[t] / count;
    for (int64_t j = 0; j < V; ++j) ce.dlogits[t * V + j] = std::exp(z[j] - mx) / sum / count;
    ce.dlogits[t * V + label] -= 1.0 / count;
  }
  return ce;
}

Vec embedding(const std::vector<int32_t>& tokens, const double* table, int64_t H) {
  Vec x(tokens.size() * static_cast<size_t>(H));
  for (size_t t = 0; t < tokens.size(); ++t) {
    std::copy(table + static_cast<int64_t>(tokens[t]) * H, table + (static_cast<int64_t>(tokens[t]) + 1) * H,
              x.begin() + static_cast<int64_t>(t) * H);
  }
  return x;
}

void embedding_backward(const std::vector<int32_t>& tokens, const Vec& dx, double* dtable, int64_t H) {
  for (size_t t = 0; t < tokens.size(); ++t) {
    for (int64_t i = 0; i < H; ++i) dtable[static_cast<int64_t>(tokens[t]) * H + i] += dx[static_cast<int64_t>(t) * H + i];
  }
}

}  // namespace ub::cpu_ops
