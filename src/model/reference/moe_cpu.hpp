// A mixture-of-experts MLP layer on the CPU in double precision, forward and backward: the
// reference an MoE step on the GPU is to be validated against, written the way the GPU runs it
// (route, permute the tokens into groups by expert, one SwiGLU per group, weighted un-permute)
// rather than the way it is easiest to write, so that each stage has a value to compare.
//
// For T tokens x [T, hidden] (transformers' MixtralSparseMoeBlock / Qwen3MoeSparseMoeBlock):
//   logits = x Wr^T                                     router, [T, E], no bias
//   p      = softmax(logits) or sigmoid(logits)         scores
//   top_k experts by p; w = p of those, divided by their sum when normalize_top_k
//   rows grouped by expert (the permutation: stable, token order within an expert)
//   y_e(x) = Wd_e (silu(Wg_e x) * Wu_e x)               each expert a SwiGLU MLP
//   out_t  = sum_i w_{t,i} y_{e_i}(x_t) + shared(x_t)   weighted un-permute, plus the shared MLP
// The shared experts are one SwiGLU MLP of their summed width over every token (DeepSeek's
// n_shared_experts convention); with shared_expert_gate (Qwen2-MoE) its output is scaled per token
// by sigmoid(x . w_sg), transformers' shared_expert_gate, a linear of the hidden size to one.
//
// Load-balancing loss, transformers' load_balancing_loss_func for one layer (Switch / Mixtral):
//   aux = E * sum_e f_e * P_e,  f_e = (tokens routed to e, counting each of a token's k slots) / T,
//                               P_e = mean over tokens of softmax(logits)_e
// It is k at perfectly balanced routing. f is piecewise constant: only P carries a gradient.
// The layer's loss for the backward pass is sum(out * dout) + aux_loss_coef * aux.
#pragma once

#include <cstdint>
#include <vector>

#include "facts/model_shape.hpp"

namespace ub {

struct MoeLayerShape {
  int64_t tokens = 0, hidden = 0, experts = 0, top_k = 0, intermediate = 0;
  int64_t shared_intermediate = 0;  // summed width of the shared experts; 0: none
  RouterScoring scoring = RouterScoring::softmax;
  bool normalize_top_k = false;
  double aux_loss_coef = 0.0;
  bool shared_expert_gate = false;  // Qwen2-MoE: sigmoid(x . w_sg) scales the shared experts' output

  // Throws UsageError for non-positive sizes or top_k outside 1..experts.
  void validate() const;
};

// Row-major, nn.Linear's [out, in].
struct MoeWeights {
  std::vector<double> router;       // [E, hidden]
  std::vector<double> gate, up;     // [E, I, hidden]
  std::vector<double> down;         // [E, hidden, I]
  std::vector<double> shared_gate, shared_up;  // [Is, hidden]
  std::vector<double> shared_down;  // [hidden, Is]
  std::vector<double> shared_expert_gate;  // [hidden] with MoeLayerShape::shared_expert_gate, else empty
};

struct MoeForward {
  std::vector<double> out;            // [T, hidden]
  std::vector<double> logits, probs;  // [T, E]
  std::vector<int64_t> chosen;        // [T, k] expert of each slot, best first
  std::vector<double> weights;        // [T, k] its weight in the sum
  std::vector<int64_t> order;         // the permutation: slot t*k+i of each row, rows grouped by expert
  std::vector<int64_t> offsets;       // [E + 1]: expert e's rows are [offsets[e], offsets[e+1])
  std::vector<double> gate, up;       // [rows, I] per permuted row: pre-activation
  std::vector<double> expert_out;     // [rows, hidden] y_e of each permuted row, unweighted
  std::vector<double> shared_gate, shared_up;  // [T, Is]
  std::vector<double> shared_out;     // [T, hidden] the shared experts' output before its gate
  std::vector<double> shared_scale;   // [T] sigmoid(x . w_sg) with shared_expert_gate, else empty
  double aux = 0;                     // the load-balancing loss (before its coefficient)
};

struct MoeGrads {
  std::vector<double> dx;  // [T, hidden]
  MoeWeights dw;           // like the weights
};

// Tokens per expert in one forward pass: the spread a GPU's grouped GEMM sees.
struct ExpertLoad {
  int64_t min = 0, max = 0;
  double median = 0;
};

MoeForward moe_forward(const MoeLayerShape& s, const MoeWeights& w, const std::vector<double>& x);

MoeGrads moe_backward(const MoeLayerShape& s, const MoeWeights& w, const std::vector<double>& x, const MoeForward& f,
                      const std::vector<double>& dout);

ExpertLoad expert_load(const MoeForward& f);

}  // namespace ub
