// The CPU reference training step; see llama_cpu.hpp. Built from the operations of
// llama_ops_cpu.hpp in the order the GPU engine runs them.
#include "model/reference/llama_cpu.hpp"

#include <cmath>

#include "model/reference/attention_cpu.hpp"
#include "model/reference/llama_ops_cpu.hpp"
#include "model/reference/moe_cpu.hpp"
#include "model/rope.hpp"

namespace ub {

namespace {

using namespace cpu_ops;

const double* tensor(const Vec& p, const LlamaLayout& l, size_t i) { return p.data() + l[i].offset; }
double* tensor(Vec& p, const LlamaLayout& l, size_t i) { return p.data() + l[i].offset; }

struct LayerActs {
  Vec x, xn1, a, xn2, gu, h, rstd1, rstd2;
  Vec qkv_raw;   // the projections before QK-norm, where the model has it
  QkNorm qk;
  Qkv qkv;
  AttentionForward attn;
  MoeForward moe;  // a mixture-of-experts layer's pass
};

// A mixture-of-experts layer's shape for T tokens; the load-balancing loss counts where the
// config adds it.
MoeLayerShape moe_shape(const ModelShape& m, int64_t T) {
  const MoeShape& e = *m.moe;
  MoeLayerShape s;
  s.tokens = T, s.hidden = m.hidden, s.experts = e.experts, s.top_k = e.top_k, s.intermediate = e.intermediate;
  s.shared_intermediate = e.shared_experts * e.shared_intermediate, s.scoring = e.scoring;
  s.normalize_top_k = e.normalize_top_k, s.aux_loss_coef = e.aux_loss ? e.aux_loss_coef : 0.0;
  s.shared_expert_gate = e.shared_gate;
  return s;
}

// Where each of the reference's MoE weights lives in the flat buffer: (tensor, its element, the
// weight vector, its element), for copying in and adding gradients back. The experts' gate|up is
// stacked [E * 2I, H]: expert e's gate rows first, then its up rows.
template <class F>
void for_each_moe_weight(const LayerParams& lp, const MoeLayerShape& s, F f) {
  const int64_t H = s.hidden, I = s.intermediate, Is = s.shared_intermediate;
  const auto n = [](int64_t v) { return static_cast<size_t>(v); };
  for (size_t i = 0; i < n(s.experts * H); ++i) f(lp.router, i, &MoeWeights::router, i);
  for (int64_t e = 0; e < s.experts; ++e) {
    for (size_t i = 0; i < n(I * H); ++i) {
      f(lp.gate_up, n(e * 2 * I * H) + i, &MoeWeights::gate, n(e * I * H) + i);
      f(lp.gate_up, n((e * 2 + 1) * I * H) + i, &MoeWeights::up, n(e * I * H) + i);
    }
  }
  for (size_t i = 0; i < n(s.experts * H * I); ++i) f(lp.down, i, &MoeWeights::down, i);
  for (size_t i = 0; Is > 0 && i < n(Is * H); ++i) {
    f(lp.shared_gate_up, i, &MoeWeights::shared_gate, i);
    f(lp.shared_gate_up, n(Is * H) + i, &MoeWeights::shared_up, i);
  }
  for (size_t i = 0; Is > 0 && i < n(H * Is); ++i) f(lp.shared_down, i, &MoeWeights::shared_down, i);
  for (size_t i = 0; s.shared_expert_gate && i < n(H); ++i) f(lp.shared_expert_gate, i, &MoeWeights::shared_expert_gate, i);
}

MoeWeights moe_weights(const Vec& P, const LlamaLayout& L, const LayerParams& lp, const MoeLayerShape& s) {
  const int64_t H = s.hidden, E = s.experts, I = s.intermediate, Is = s.shared_intermediate;
  MoeWeights w{Vec(static_cast<size_t>(E * H)), Vec(static_cast<size_t>(E * I * H)), Vec(static_cast<size_t>(E * I * H)),
               Vec(static_cast<size_t>(E * H * I)), Vec(static_cast<size_t>(Is * H)), Vec(static_cast<size_t>(Is * H)),
               Vec(static_cast<size_t>(H * Is)), Vec(s.shared_expert_gate ? static_cast<size_t>(H) : 0)};
  for_each_moe_weight(lp, s, [&](size_t t, size_t at, Vec MoeWeights::*v, size_t j) { (w.*v)[j] = P[L[t].offset + at]; });
  return w;
}

void add_into(Vec& y, const Vec& x) {
  for (size_t i = 0; i < y.size(); ++i) y[i] += x[i];
}

}  // namespace

LlamaCpuResult llama_cpu_step(const ModelShape& m, const LlamaLayout& L, const Vec& P, const std::vector<int32_t>& tokens,
                              int64_t batch, int64_t seqlen, bool with_grads) {
  const int64_t T = batch * seqlen, H = m.hidden, I = m.intermediate, V = m.vocab;
  const HeadDims hd{T, seqlen, m.heads, m.kv_heads, m.head_dim};
  const int64_t qw = m.heads * m.head_dim;
  const RopeTable tab = rope_table(m, seqlen);
  // Each layer's attention: causal, within its window where the config gives it one.
  const auto ash = [&](size_t l) {
    return AttentionShape{batch, seqlen, m.heads, m.kv_heads, m.head_dim, true, {}, m.window(static_cast<int64_t>(l))};
  };
  const double eps = m.rms_norm_eps;

  // Forward.
  Vec x = embedding(tokens, tensor(P, L, L.embed), H);
  std::vector<LayerActs> acts(L.layers.size());
  double aux = 0;  // the load-balancing losses, times their coefficient
  for (size_t l = 0; l < L.layers.size(); ++l) {
    const LayerParams& lp = L.layers[l];
    LayerActs& A = acts[l];
    A.x = x;
    Norm n1 = rmsnorm(A.x, tensor(P, L, lp.attn_norm), T, H, eps);
    A.xn1 = std::move(n1.y), A.rstd1 = std::move(n1.rstd);
    Vec qkv = linear(A.xn1, tensor(P, L, lp.qkv), T, H, hd.width());
    if (m.qk_norm) {
      A.qk = qk_norm(qkv, tensor(P, L, lp.q_norm), tensor(P, L, lp.k_norm), hd, eps);
      A.qkv_raw = std::move(qkv);
      qkv = A.qk.y;
    }
    A.qkv = rope_split(qkv, hd, tab);
    A.attn = attention_forward(ash(l), A.qkv.q, A.qkv.k, A.qkv.v);
    A.a = linear(A.attn.out, tensor(P, L, lp.o), T, qw, H);
    add_into(A.a, A.x);
    Norm n2 = rmsnorm(A.a, tensor(P, L, lp.mlp_norm), T, H, eps);
    A.xn2 = std::move(n2.y), A.rstd2 = std::move(n2.rstd);
    if (lp.moe()) {
      const MoeLayerShape ms = moe_shape(m, T);
      A.moe = moe_forward(ms, moe_weights(P, L, lp, ms), A.xn2);
      x = A.moe.out;
      aux += ms.aux_loss_coef * A.moe.aux;
    } else {
      A.gu = linear(A.xn2, tensor(P, L, lp.gate_up), T, H, 2 * I);
      A.h = swiglu(A.gu, T, I);
      x = linear(A.h, tensor(P, L, lp.down), T, I, H);
    }
    add_into(x, A.a);
  }
  Norm nf = rmsnorm(x, tensor(P, L, L.final_norm), T, H, eps);
  LlamaCpuResult r;
  r.logits = linear(nf.y, tensor(P, L, L.lm_head), T, H, V);
  CrossEntropy ce = cross_entropy(r.logits, tokens, T, seqlen, V);
  r.loss = ce.loss + aux;
  if (!with_grads) return r;

  // Backward.
  Vec& G = r.grads;
  G.assign(P.size(), 0.0);
  Vec dxf = linear_backward(ce.dlogits, nf.y, tensor(P, L, L.lm_head), tensor(G, L, L.lm_head), T, H, V);
  Vec dx = rmsnorm_backward(dxf, x, tensor(P, L, L.final_norm), nf.rstd, tensor(G, L, L.final_norm), T, H);
  for (size_t li = L.layers.size(); li-- > 0;) {
    const LayerParams& lp = L.layers[li];
    const LayerActs& A = acts[li];
    Vec dxn2;
    if (lp.moe()) {
      const MoeLayerShape ms = moe_shape(m, T);
      MoeGrads mg = moe_backward(ms, moe_weights(P, L, lp, ms), A.xn2, A.moe, dx);
      for_each_moe_weight(lp, ms, [&](size_t t, size_t at, Vec MoeWeights::*v, size_t j) { G[L[t].offset + at] += (mg.dw.*v)[j]; });
      dxn2 = std::move(mg.dx);
    } else {
      Vec dh = linear_backward(dx, A.h, tensor(P, L, lp.down), tensor(G, L, lp.down), T, I, H);
      Vec dgu = swiglu_backward(dh, A.gu, T, I);
      dxn2 = linear_backward(dgu, A.xn2, tensor(P, L, lp.gate_up), tensor(G, L, lp.gate_up), T, H, 2 * I);
    }
    Vec da = rmsnorm_backward(dxn2, A.a, tensor(P, L, lp.mlp_norm), A.rstd2, tensor(G, L, lp.mlp_norm), T, H);
    add_into(da, dx);
    Vec dO = linear_backward(da, A.attn.out, tensor(P, L, lp.o), tensor(G, L, lp.o), T, qw, H);
    AttentionGrads ag = attention_backward(ash(li), A.qkv.q, A.qkv.k, A.qkv.v, A.attn, dO);
    Vec dqkv = rope_join_backward(Qkv{std::move(ag.dq), std::move(ag.dk), std::move(ag.dv)}, hd, tab);
    if (m.qk_norm) {
      dqkv = qk_norm_backward(dqkv, A.qkv_raw, tensor(P, L, lp.q_norm), tensor(P, L, lp.k_norm), A.qk,
                              tensor(G, L, lp.q_norm), tensor(G, L, lp.k_norm), hd);
    }
    Vec dxn1 = linear_backward(dqkv, A.xn1, tensor(P, L, lp.qkv), tensor(G, L, lp.qkv), T, H, hd.width());
    dx = rmsnorm_backward(dxn1, A.x, tensor(P, L, lp.attn_norm), A.rstd1, tensor(G, L, lp.attn_norm), T, H);
    add_into(dx, da);
  }
  embedding_backward(tokens, dx, tensor(G, L, L.embed), H);
  return r;
}

double adamw_cpu_step(Vec& p, Vec& m, Vec& v, Vec g, const AdamWParams& o, int64_t step) {
  double ss = 0;
  for (double x : g) ss += x * x;
  const double norm = std::sqrt(ss);
  const double coef = clip_coefficient(norm, o.max_grad_norm);
  const double bias1 = 1 - std::pow(o.beta1, static_cast<double>(step));
  const double bias2 = 1 - std::pow(o.beta2, static_cast<double>(step));
  for (size_t i = 0; i < p.size(); ++i) {
    adamw_update(p[i], m[i], v[i], g[i] * coef, o.lr, o.beta1, o.beta2, o.eps, o.weight_decay, bias1, bias2);
  }
  return norm;
}

}  // namespace ub
