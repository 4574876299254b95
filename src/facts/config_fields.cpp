// The known fields of a config.json; see config_fields.hpp.
#include "facts/config_fields.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.hpp"

namespace ub {

namespace {

// Read by parse_hf_config and layer_pattern.cpp: what the shape is made of.
const std::set<std::string_view>& interpreted() {
  static const std::set<std::string_view> s = {
      // the trunk
      "model_type", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
      "num_key_value_heads", "head_dim", "vocab_size", "tie_word_embeddings", "rms_norm_eps",
      "max_position_embeddings", "rope_theta", "rope_scaling", "rope_parameters", "hidden_act",
      "hidden_activation", "attention_bias", "mlp_bias", "query_pre_attn_scalar", "rope_local_base_freq",
      "attn_logit_softcapping", "final_logit_softcapping", "use_mrope",
      // attention windows
      "sliding_window", "use_sliding_window", "max_window_layers", "layer_types", "sliding_window_pattern",
      "_sliding_window_pattern",
      // mixture of experts
      "num_experts", "num_local_experts", "num_experts_per_tok", "moe_intermediate_size",
      "shared_expert_intermediate_size", "n_shared_experts", "n_routed_experts", "norm_topk_prob",
      "scoring_func", "router_aux_loss_coef", "output_router_logits", "decoder_sparse_step", "mlp_only_layers",
      "first_k_dense_replace", "router_jitter_noise",
  };
  return s;
}

// Known to leave the architecture alone: identity, token ids, storage, generation defaults,
// PretrainedConfig's serialised bookkeeping, and dropout (a training regulariser, zero in every
// released config; it changes neither the shapes nor the FLOPs).
const std::set<std::string_view>& harmless() {
  static const std::set<std::string_view> s = {
      "_name_or_path", "architectures", "transformers_version", "torch_dtype", "dtype", "use_bfloat16",
      "initializer_range", "attention_dropout", "hidden_dropout", "use_cache", "cache_implementation",
      "bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id",
      "pretraining_tp", "quantization_config", "auto_map", "_attn_implementation_autoset", "_commit_hash",
      "return_dict", "output_hidden_states", "output_attentions", "torchscript", "pruned_heads",
      "tie_encoder_decoder", "chunk_size_feed_forward", "is_encoder_decoder", "is_decoder",
      "cross_attention_hidden_size", "add_cross_attention", "finetuning_task", "id2label", "label2id",
      "task_specific_params", "problem_type", "tokenizer_class", "prefix", "tf_legacy_loss",
      "max_length", "min_length", "do_sample", "early_stopping", "num_beams", "num_beam_groups",
      "diversity_penalty", "temperature", "top_k", "top_p", "typical_p", "repetition_penalty",
      "length_penalty", "no_repeat_ngram_size", "encoder_no_repeat_ngram_size", "bad_words_ids",
      "num_return_sequences", "output_scores", "return_dict_in_generate", "forced_bos_token_id",
      "forced_eos_token_id", "remove_invalid_values", "exponential_decay_length_penalty",
      "suppress_tokens", "begin_suppress_tokens",
  };
  return s;
}

}  // namespace

void check_model_type(const std::string& model_type, bool windows, bool experts, const std::string& where) {
  struct Kind {
    bool windows, experts;
  };
  static const std::map<std::string_view, Kind> kinds = {
      {"llama", {false, false}},  {"gemma", {false, false}},      {"mistral", {true, false}},
      {"mixtral", {true, true}},  {"qwen2", {true, false}},       {"qwen2_moe", {true, true}},
      {"qwen3", {true, false}},   {"qwen3_moe", {true, true}},    {"gemma2", {true, false}},
      {"gemma3", {true, false}},  {"gemma3_text", {true, false}}, {"olmoe", {false, true}},
  };
  if (model_type.empty()) return;
  const auto it = kinds.find(model_type);
  if (it == kinds.end()) {
    std::string known;
    for (const auto& [name, kind] : kinds) known += (known.empty() ? "" : ", ") + std::string(name);
    throw WorkError(fmt::format("{}: model_type '{}' is not one upgradebench describes ({}): its layers may be built "
                                "otherwise", where, model_type, known));
  }
  if (windows && !it->second.windows) {
    throw WorkError(fmt::format("{}: model_type '{}' attends to every token (its transformers code has no sliding "
                                "window): the config's window would count a model that does not run", where, model_type));
  }
  if (experts && !it->second.experts) {
    throw WorkError(fmt::format("{}: model_type '{}' has one MLP per layer (its transformers code routes to no "
                                "experts): the config's experts would count a model that does not run", where, model_type));
  }
}

void refuse_absent_type_defaults(const nlohmann::json& config, const std::string& model_type, const std::string& where) {
  // Fields whose transformers config class default for the type differs from what a config that
  // leaves them out is read as here (the heads, intermediate_size, no window, no shared expert).
  struct Default {
    const char* field;
    const char* class_default;
  };
  static const std::map<std::string_view, std::vector<Default>> defaults = {
      {"mistral", {{"num_key_value_heads", "8"}, {"sliding_window", "4096 (every layer windowed)"}}},
      {"mixtral", {{"num_key_value_heads", "8"}}},  // its sliding_window defaults to None, as read here
      {"qwen3_moe", {{"num_key_value_heads", "4"}, {"moe_intermediate_size", "768"}}},
      {"qwen2_moe",
       {{"num_key_value_heads", "16"}, {"moe_intermediate_size", "1408"}, {"shared_expert_intermediate_size", "5632"}}},
  };
  const auto it = defaults.find(model_type);
  if (it == defaults.end()) return;
  for (const Default& d : it->second) {
    if (config.contains(d.field)) continue;  // null included: the config said it
    throw WorkError(fmt::format("{}: {} is left out, where model_type '{}''s transformers config takes {}: give it (the "
                                "checkpoint's config.json has it)", where, d.field, model_type, d.class_default));
  }
}

void check_config_fields(const nlohmann::json& config, const std::string& where) {
  for (const auto& [key, value] : config.items()) {
    if (interpreted().count(key) || harmless().count(key)) continue;
    throw WorkError(fmt::format("{}: field '{}' is not understood: upgradebench would count the wrong model; "
                                "its architecture may need what this field says (docs/models.md lists the "
                                "fields read)", where, key));
  }
}

}  // namespace ub
