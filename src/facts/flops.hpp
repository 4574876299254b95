// FLOP accounting for one training step of a Llama-family model: benchmark.py's estimate_tflos,
// written once, here (benchmark.py is the ml-engineering guide's training benchmark). Conventions:
//
//   dense_N = (3*h*I + h*(nq*d + 2*nkv*d + nq*d)) * L + V*h     embedding/lm_head counted once
//   dense   = 6 * dense_N * B * s                                fwd (2) + bwd (4) per parameter
//   attn    = 6 * B * s^2 * d * nq * L                           causal: the lower triangle only
//             (12 instead of 6 when not causal; packed documents: sum(len_i^2) replaces s^2)
//   model TFLOP per step = (dense + attn) / 1e12; TFLOPS = that / step seconds; MFU = TFLOPS / peak
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
  std::vector<int64_t> docs;       // or packed documents of these lengths, summing to the sequence
};

struct StepFlops {
  double dense = 0;      // FLOP
  double attention = 0;  // FLOP
  double total() const { return dense + attention; }
  double attention_share() const { return total() > 0 ? attention / total() : 0; }
};

// dense_N above: the parameters that take part in matrix products, lm_head included once.
double dense_matmul_params(const ModelShape& m);

// sum over documents of len_i^2 for a sequence of `seqlen` tokens cut into `doc_len` pieces.
double sum_of_squared_doc_lengths(int64_t seqlen, std::optional<int64_t> doc_len);

StepFlops step_flops(const ModelShape& m, int64_t seqlen, const FlopOptions& opt);

}  // namespace ub
