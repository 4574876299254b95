// FLOP accounting for one training step of a decoder-only model: benchmark.py's estimate_tflos,
// written once, here (benchmark.py is the ml-engineering guide's training benchmark). Conventions:
//
//   dense_N = sum over layers of N_l + V*h                       embedding/lm_head counted once
//     N_l   = h*(nq*d + 2*nkv*d + nq*d) + 3*h*I                  a dense layer
//     N_l   = h*(nq*d + 2*nkv*d + nq*d) + h*E                    an MoE layer: attention, router,
//             + k*3*h*I_e + n_shared*3*h*I_s                     the k routed and the shared experts
//   dense   = 6 * dense_N * B * s                                fwd (2) + bwd (4) per parameter
//   attn    = 6 * B * d * nq * sum over layers of S_l            causal: the lower triangle only
//     S_l   = s^2                                                a full layer
//     S_l   = 2*s*w - w^2   when w < s                           a causal window of w keys: the
//             (s*w - w^2/2 key positions instead of s^2/2)       first w queries see a triangle
//             (12 instead of 6 when not causal; packed documents: the sum over documents replaces s)
//   model TFLOP per step = (dense + attn) / 1e12; TFLOPS = that / step seconds; MFU = TFLOPS / peak
//
// An MoE model's FLOPs are its active FLOPs: the k experts a token goes to, not all E of them, as
// torchtitan and Megatron report MoE MFU. The routing itself (scores, top-k, the permutation and
// its inverse) is memory traffic, not matrix products, and counts nothing, as softmax and norms
// count nothing in the dense convention.
//
// HFU adds the forward pass that activation checkpointing recomputes in the backward pass: one
// more 2*N_layers*tokens for the layers and one more attention forward (a third of the attention
// term); the embedding/lm_head term is not recomputed. That is the guide's "about 1.3x".
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "facts/model_shape.hpp"

namespace ub {

struct FlopOptions {
  int64_t batch = 1;
  bool causal = true;
  std::optional<int64_t> doc_len;  // packed documents of this length (the last one may be shorter)
  bool recompute = false;          // count activation-checkpoint recompute (HFU)
  // Count the scores a FlashAttention backward pass recomputes (one more product beside the
  // forward's two): attention's FLOPs as its kernels execute them, 7/6 of the model's, as our
  // engine's decomposition counts them.
  bool flash_backward = false;
  std::vector<int64_t> docs;       // or packed documents of these lengths, summing to the sequence
};

struct StepFlops {
  double dense = 0;      // FLOP
  double attention = 0;  // FLOP
  double total() const { return dense + attention; }
  double attention_share() const { return total() > 0 ? attention / total() : 0; }
};

// dense_N above: the parameters that take part in matrix products, lm_head included once; of an
// MoE model the active ones.
double dense_matmul_params(const ModelShape& m);

// S_l above for one document of `len` tokens and a window of `window` keys (0: full attention).
double causal_attention_squares(int64_t len, int64_t window);

// sum over documents of len_i^2 for a sequence of `seqlen` tokens cut into `doc_len` pieces.
double sum_of_squared_doc_lengths(int64_t seqlen, std::optional<int64_t> doc_len);

StepFlops step_flops(const ModelShape& m, int64_t seqlen, const FlopOptions& opt);

}  // namespace ub
