// Scaled-dot-product attention on the CPU in double precision, forward and backward: the
// reference the GPU attention (cuDNN fused SDPA) and the training engine are validated against
// on small shapes. Grouped-query attention (kv heads dividing q heads), causal or not, packed
// documents (several sequences in one buffer: a token attends only within its own document), and
// a causal sliding window (Mistral, Gemma, gpt-oss: query i attends to keys i - w < j <= i, itself
// and the w - 1 before it, transformers' sliding_window convention).
//
// Layout BSHD, row-major: Q and O are [batch, seqlen, heads, head_dim], K and V
// [batch, seqlen, kv_heads, head_dim]; the softmax statistic LSE (log-sum-exp of the scaled
// scores, what a fused backward needs) is [batch, heads, seqlen].
//
//   S = scale * Q K^T (masked), P = softmax(S), O = P V, LSE = log sum exp S
//   dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(dO * O)), dQ = scale dS K, dK = scale dS^T Q
//
// FLOPs by bench_flash_attn.py's convention (shared/reference/formats.md): f = 4 * batch * s^2 * heads *
// head_dim, halved when causal, sum of len^2 for packed documents; forward+backward counts 3.5 f.
// A window w < len replaces len^2 by 2*len*w - w^2 (facts/flops.hpp's causal_attention_squares).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ub {

struct AttentionShape {
  int64_t batch = 1, seqlen = 0, heads = 0, kv_heads = 0, head_dim = 0;
  bool causal = true;
  std::vector<int64_t> doc_lens;  // packed documents summing to seqlen; empty: one document
  int64_t window = 0;             // causal sliding window in keys (0: none)

  double scale() const;
  // Throws UsageError for head counts that do not divide, non-positive sizes, bad documents, a
  // negative window or a window without causal attention.
  void validate() const;
  size_t q_elems() const { return static_cast<size_t>(batch * seqlen * heads * head_dim); }
  size_t kv_elems() const { return static_cast<size_t>(batch * seqlen * kv_heads * head_dim); }
};

struct AttentionForward {
  std::vector<double> out;  // like Q
  std::vector<double> lse;  // [batch, heads, seqlen]
};

struct AttentionGrads {
  std::vector<double> dq, dk, dv;
};

AttentionForward attention_forward(const AttentionShape& s, const std::vector<double>& q,
                                   const std::vector<double>& k, const std::vector<double>& v);

AttentionGrads attention_backward(const AttentionShape& s, const std::vector<double>& q,
                                  const std::vector<double>& k, const std::vector<double>& v,
                                  const AttentionForward& fwd, const std::vector<double>& dout);

// bench_flash_attn.py's attention FLOPs (see above); forward+backward when `with_backward`.
double attention_flops(const AttentionShape& s, bool with_backward);

}  // namespace ub
