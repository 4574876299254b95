// The training step of a Llama-family decoder on the CPU in double precision: the reference the
// GPU engine is checked against, small enough to verify by finite differences. Same parameter
// layout (model/llama_layout.hpp), same rotary table, same formulas
// (model/train_math.hpp); attention from model/reference/attention_cpu.hpp.
//
//   x = embed[tokens]
//   per layer: a = x + o_proj(attn(rope(q), rope(k), v)),  (q, k, v) = qkv_proj(rmsnorm(x))
//              x = a + down_proj(silu(gate) * up),        (gate, up) = gate_up_proj(rmsnorm(a))
//              or, in a mixture-of-experts layer, x = a + moe(rmsnorm(a)) (moe_cpu.hpp), and the
//              loss gains router_aux_loss_coef times the layer's load-balancing loss where the
//              config adds it (one loss per layer, summed, as Switch and Megatron count it;
//              transformers pools every layer's routing into one loss instead)
//   logits = lm_head(rmsnorm(x));  rmsnorm(x) = w * x / sqrt(mean(x^2) + eps)
//   loss = mean over b, s < S-1 of  logsumexp(logits[b, s]) - logits[b, s, tokens[b, s+1]]
//          (Hugging Face: labels = input ids, shifted inside)
#pragma once

#include <cstdint>
#include <vector>

#include "facts/model_shape.hpp"
#include "model/llama_layout.hpp"
#include "model/train_math.hpp"

namespace ub {

struct LlamaCpuResult {
  double loss = 0;
  std::vector<double> logits;  // [batch * seqlen, vocab]
  std::vector<double> grads;   // flat, like the parameters (empty unless asked for)
};

// Forward (and backward when `with_grads`) for tokens [batch, seqlen].
LlamaCpuResult llama_cpu_step(const ModelShape& m, const LlamaLayout& layout, const std::vector<double>& params,
                              const std::vector<int32_t>& tokens, int64_t batch, int64_t seqlen, bool with_grads);

// Clip by global norm, then AdamW over the flat buffers; returns the norm before clipping.
// `step` counts from 1.
double adamw_cpu_step(std::vector<double>& params, std::vector<double>& m, std::vector<double>& v,
                      std::vector<double> grads, const AdamWParams& opt, int64_t step);

}  // namespace ub
