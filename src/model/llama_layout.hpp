// Where each parameter of a Llama-family decoder lives in one flat buffer: the CPU reference and
// the GPU engine share this layout, so a gradient can be compared tensor by tensor and the
// optimizer runs once over the whole buffer.
//
// Tensors are row-major [rows, cols] as PyTorch stores nn.Linear weights ([out, in]). Two
// projections are stored fused, each the row-wise concatenation of Hugging Face's tensors:
// qkv_proj = [q_proj; k_proj; v_proj] ((heads + 2 kv_heads) * head_dim rows) and
// gate_up_proj = [gate_proj; up_proj] (2 * intermediate rows). With tied embeddings there is no
// lm_head tensor: the embedding serves both.
//
// Initialisation in the Llama style (Hugging Face's _init_weights): matrices and the embedding
// normal(0, initializer_range = 0.02), norm weights 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "facts/model_shape.hpp"

namespace ub {

struct ParamTensor {
  std::string name;
  int64_t rows = 0, cols = 0;  // cols = 1 for a norm weight vector
  size_t offset = 0;           // elements from the start of the flat buffer
  bool is_norm = false;
  // Its gradient is a sum over every token, added up in fp32 before a bf16 gradient takes it: the
  // norm weights and Qwen2-MoE's shared-expert gate (vectors that every token updates).
  bool summed_in_fp32 = false;
  // The tensor's offset in llama_layout(m): initial values are drawn by this index, so a layout
  // padded for sharding (model/shard_plan.hpp) starts from the same weights.
  size_t init_index = 0;
  size_t count() const { return static_cast<size_t>(rows * cols); }
};

inline constexpr size_t kNoTensor = static_cast<size_t>(-1);

struct LayerParams {
  // Indices into LlamaLayout::tensors. In a mixture-of-experts layer gate_up and down are the
  // experts', stacked as transformers 5 stores them: [E * 2I, H] (each expert's gate rows, then
  // its up rows) and [E * H, I].
  size_t attn_norm, qkv, o, mlp_norm, gate_up, down;
  // A mixture-of-experts layer's own tensors, kNoTensor where it has none: the router [E, H], the
  // shared experts' gate|up [2Is, H] and down [H, Is], and Qwen2-MoE's shared-expert gate [1, H].
  size_t router = kNoTensor, shared_gate_up = kNoTensor, shared_down = kNoTensor, shared_expert_gate = kNoTensor;
  // QK-norm's weights [d] (Qwen3), kNoTensor without it: each head's q and k RMS-normalised
  // before the rotary embedding.
  size_t q_norm = kNoTensor, k_norm = kNoTensor;
  size_t last = 0;  // the layer's last tensor: its tensors are [attn_norm, last]
  bool moe() const { return router != kNoTensor; }
};

struct LlamaLayout {
  std::vector<ParamTensor> tensors;
  std::vector<LayerParams> layers;
  size_t embed = 0, final_norm = 0, lm_head = 0;  // lm_head == embed when tied
  size_t total = 0;                                // elements, padding included

  const ParamTensor& operator[](size_t i) const { return tensors[i]; }
};

// Each tensor starts at a multiple of this many elements (256 bytes in bf16: GEMM-friendly).
inline constexpr size_t kParamAlign = 128;
inline constexpr double kInitStd = 0.02;

LlamaLayout llama_layout(const ModelShape& m);

// The initial value of element `i` of the flat buffer (0 for padding), from `seed`.
float llama_init_value(const LlamaLayout& layout, uint64_t seed, size_t i);
// The whole buffer on the host (for the CPU reference and small models).
std::vector<float> llama_init_parameters(const LlamaLayout& layout, uint64_t seed);

// Synthetic token ids for batch x seqlen: uniform below vocab - 256 as benchmark.py draws them (below vocab for a vocabulary of 512 or fewer, where that would leave too few).
int64_t synthetic_token_bound(int64_t vocab);
// Sequences [first_sequence, first_sequence + batch) of one stream: the sequences of rank r of a
// data-parallel job are the next `batch` after those of the ranks before it, so the job's ranks
// together train exactly what one GPU trains with the whole batch.
std::vector<int32_t> synthetic_tokens(uint64_t seed, int64_t batch, int64_t seqlen, int64_t vocab,
                                      int64_t first_sequence = 0);

// What the model has that the engine does not run (a GeGLU MLP, Gemma's extra norms and scaling,
// soft-capping, biases), each in a few words; empty for a Llama-family shape, dense or a mixture
// of experts, with or without QK-norm.
std::vector<std::string> untrained_features(const ModelShape& m);

// Throws UsageError when the engine cannot run this shape (odd head_dim, heads not divisible by
// kv_heads, untrained_features, ...), naming the model and saying what the engine trains.
void check_trainable(const ModelShape& m);

// Throws UsageError when a training step of this shape cannot run: the model (check_trainable),
// the batch (1..4096), the sequence length (2..16M) or the loss chunk (0..16M tokens). The one
// check of a step's configuration, for the command line and the engine alike. Sliding-window
// layers attend within their window (cuDNN's fused attention with the band mask).
void check_training_step(const ModelShape& m, int64_t batch, int64_t seqlen, int64_t loss_chunk);

// The step's options that must go together, as the command line and the engine both name them.
struct StepOptions {
  int zero = 0;
  bool offload_optimizer = false, master_weights = true;
  bool checkpointing = false, selective = false, offload_checkpoints = false;
  int64_t mlp_tile = 0;
};

// Throws UsageError for options of the step that do not go together: a ZeRO stage outside 0..3,
// an offloaded optimizer without fp32 master weights or without a ZeRO stage to shard it,
// selective checkpointing or offloaded checkpoints without checkpointing, an MLP tile below zero
// or beyond 16M tokens.
void check_step_options(const StepOptions& o);

}  // namespace ub
