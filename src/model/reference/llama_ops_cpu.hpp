// The operations of the Llama training step on the CPU in double precision, forward and
// backward, one function each: the CPU reference model (llama_cpu.hpp) is built from them and
// each GPU kernel is tested against its counterpart here. Tensors are row-major [T, width]
// vectors (T = batch * seqlen tokens); formulas in model/train_math.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "model/rope.hpp"

namespace ub::cpu_ops {

using Vec = std::vector<double>;

// y[T, out] = x[T, in] w^T, w [out, in].
Vec linear(const Vec& x, const double* w, int64_t T, int64_t in, int64_t out);
// Returns dx = dy w; dw += dy^T x.
Vec linear_backward(const Vec& dy, const Vec& x, const double* w, double* dw, int64_t T, int64_t in, int64_t out);

struct Norm {
  Vec y, rstd;
};
// y = w x rstd, rstd = 1 / sqrt(mean(x^2) + eps) per row.
Norm rmsnorm(const Vec& x, const double* w, int64_t T, int64_t H, double eps);
// Returns dx = rstd (dy w - xhat mean(dy w xhat)); dw += sum over rows dy xhat.
Vec rmsnorm_backward(const Vec& dy, const Vec& x, const double* w, const Vec& rstd, double* dw, int64_t T, int64_t H);

struct Qkv {
  Vec q, k, v;  // [T, nq * d], [T, nk * d], [T, nk * d]
};
struct HeadDims {
  int64_t T, S, nq, nk, d;
  int64_t width() const { return (nq + 2 * nk) * d; }
};
// QK-norm (Qwen3): each query head and each key head of qkv [T, (nq + 2 nk) d] RMS-normalised
// over its d, with the weights q_w [d] (every query head) and k_w [d] (every key head); the values
// as they are. The rotary embedding comes after.
struct QkNorm {
  Vec y;               // [T, (nq + 2 nk) d]
  Vec q_rstd, k_rstd;  // [T * nq], [T * nk]
};
QkNorm qk_norm(const Vec& qkv, const double* q_w, const double* k_w, const HeadDims& h, double eps);
// The gradient of qkv from dy (of qk_norm's y); dq_w, dk_w += sum dy xhat.
Vec qk_norm_backward(const Vec& dy, const Vec& qkv, const double* q_w, const double* k_w, const QkNorm& n,
                     double* dq_w, double* dk_w, const HeadDims& h);

// Splits qkv [T, (nq + 2 nk) d] into q, k, v, rotating q and k at position t % S.
Qkv rope_split(const Vec& qkv, const HeadDims& h, const RopeTable& tab);
// The transpose: dq, dk, dv -> dqkv.
Vec rope_join_backward(const Qkv& grad, const HeadDims& h, const RopeTable& tab);

// gu [T, 2I] (gate | up) -> silu(gate) * up [T, I]; and the gradient of gu from dh.
Vec swiglu(const Vec& gu, int64_t T, int64_t I);
Vec swiglu_backward(const Vec& dh, const Vec& gu, int64_t T, int64_t I);

struct CrossEntropy {
  double loss = 0;  // mean over the predicted rows
  Vec row_loss;     // [T], 0 on the last row of each sequence
  Vec dlogits;      // [T, V]
};
// Next-token cross-entropy: row t predicts tokens[t + 1] within its sequence of S.
CrossEntropy cross_entropy(const Vec& logits, const std::vector<int32_t>& tokens, int64_t T, int64_t S, int64_t V);

Vec embedding(const std::vector<int32_t>& tokens, const double* table, int64_t H);
void embedding_backward(const std::vector<int32_t>& tokens, const Vec& dx, double* dtable, int64_t H);

}  // namespace ub::cpu_ops
