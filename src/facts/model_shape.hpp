// The shape of a decoder-only transformer, read from a Hugging Face config.json (a path) or from a
// bundled preset stored the same way (data/models/<id>.json). Only what FLOP accounting, memory
// and the training engine need is kept: the Llama-family trunk, and beside it what the models
// trained in 2026 add (a mixture-of-experts MLP, sliding-window attention layers, QK-norm, Gemma's
// GeGLU and sandwich norms). The engine trains the Llama-family trunk only; check_trainable
// (model/llama_layout.hpp) refuses the rest by name, while FLOPs and memory count all of it.
//
// HF conventions followed: num_key_value_heads absent means equal to num_attention_heads;
// head_dim, when present and not null, wins over hidden_size / num_attention_heads; a multimodal
// config's text model lives under text_config; tie_word_embeddings defaults to false. A field the
// parser does not know is refused by name (facts/config_fields.hpp): counting a model whose
// architecture we did not read would be counting another model.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ub {

struct RopeScaling {
  std::string type;  // "llama3", "linear", ... as written in the config
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position = 8192;
};

// How a token picks its experts: scores from the router's logits, softmax over all experts
// (Mixtral, Qwen-MoE) or a sigmoid per expert (DeepSeek-V3's scoring_func).
enum class RouterScoring { softmax, sigmoid };

// The mixture-of-experts MLP of an MoE layer, as transformers' Mixtral / Qwen3-MoE blocks run it:
// a router (hidden -> experts, no bias) scores every expert, each token goes to its top_k
// experts, each expert a SwiGLU MLP of its own intermediate size, the outputs summed weighted by
// the (optionally renormalised) scores; shared experts see every token.
struct MoeShape {
  int64_t experts = 0;              // routed experts per MoE layer (num_experts, num_local_experts)
  int64_t top_k = 0;                // experts per token (num_experts_per_tok)
  int64_t intermediate = 0;         // each routed expert's (moe_intermediate_size)
  int64_t shared_experts = 0;       // experts every token passes through
  int64_t shared_intermediate = 0;  // each shared expert's intermediate size
  bool shared_gate = false;         // Qwen2-MoE: sigmoid(x . w) scales the shared expert's output
  RouterScoring scoring = RouterScoring::softmax;
  bool normalize_top_k = false;     // the top_k weights divided by their sum (norm_topk_prob)
  bool aux_loss = false;            // the load-balancing loss is added (output_router_logits)
  double aux_loss_coef = 0.0;       // router_aux_loss_coef
};

struct ModelShape {
  std::string id;  // preset id, or the config path
  std::string model_type;  // as the config names it ("llama", "qwen3_moe", ...); empty when absent
  int64_t hidden = 0, intermediate = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  int64_t vocab = 0;
  bool tied_embeddings = false;
  double rope_theta = 10000.0;
  std::optional<RopeScaling> rope_scaling;
  double rms_norm_eps = 1e-5;
  int64_t max_position = 0;  // 0 when the config does not say
  int64_t config_layers = 0; // depth in the config, before --layers

  // What the Llama trunk does not have. The defaults are Llama's.
  std::string mlp_activation = "silu";  // hidden_act / hidden_activation: SwiGLU, or GeGLU for gelu*
  bool attention_bias = false, mlp_bias = false;
  bool qk_norm = false;                 // RMSNorm of each head's q and k (Qwen3, Gemma 3)
  int64_t norms_per_layer = 2;          // 4 with Gemma's norms after attention and the MLP too
  std::optional<double> query_scale;    // Gemma's query_pre_attn_scalar (1/sqrt of it scales q.k)
  bool softcapping = false;             // Gemma 2's tanh caps on attention or final logits

  // Mixture of experts: absent for a dense model. moe_layers says which layers have it (all when
  // empty); the others run the dense MLP of `intermediate`.
  std::optional<MoeShape> moe;
  std::vector<bool> moe_layers;
  // Attention window per layer: 0 for full causal attention, w for a layer whose query attends to
  // itself and the w - 1 tokens before it (transformers' sliding_window). Empty: all full.
  std::vector<int64_t> windows;

  bool is_moe_layer(int64_t layer) const;
  int64_t window(int64_t layer) const;  // 0: full attention
  bool has_windows() const;             // some layer has a window

  // Every parameter: embedding, lm_head when untied, norms, projections, and every expert.
  int64_t parameter_count() const;
  // What one token passes through: the MoE layers' top_k routed experts, the shared experts and
  // the router instead of all experts (the "active parameters" of an MoE model card). Equal to
  // parameter_count() for a dense model.
  int64_t active_parameter_count() const;
};

// The weights of layer `layer` that one token multiplies: the attention projections and the MLP,
// of an MoE layer its router, top_k routed experts and shared experts (flops.hpp's N per layer).
double layer_matmul_params(const ModelShape& m, int64_t layer);

// Parses a config.json object; `where` names the file in error messages.
ModelShape parse_hf_config(const nlohmann::json& config, const std::string& where);

// `name` is a preset id (data/models/<id>.json) or a path to a config.json.
// Throws UsageError for an unknown preset / missing file, WorkError for a malformed config.
ModelShape load_model(const std::string& name, const std::filesystem::path& models_dir);

// The preset ids bundled in `models_dir`, sorted.
std::vector<std::string> list_presets(const std::filesystem::path& models_dir);

// The ml-engineering guide's advice for fitting a model on one node: keep the first `layers` layers.
ModelShape with_layers(ModelShape m, int64_t layers);

}  // namespace ub
