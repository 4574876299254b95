// The shape of a Llama-family decoder, read from a Hugging Face config.json (a path) or from a
// bundled preset stored the same way (data/models/<id>.json). Only what FLOP accounting, memory
// and the training engine need is kept.
//
// HF conventions followed: num_key_value_heads absent means equal to num_attention_heads;
// head_dim, when present and not null, wins over hidden_size / num_attention_heads; a multimodal
// config's text model lives under text_config; tie_word_embeddings defaults to false.
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

struct ModelShape {
  std::string id;  // preset id, or the config path
  int64_t hidden = 0, intermediate = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  int64_t vocab = 0;
  bool tied_embeddings = false;
  double rope_theta = 10000.0;
  std::optional<RopeScaling> rope_scaling;
  double rms_norm_eps = 1e-5;
  int64_t max_position = 0;  // 0 when the config does not say
  int64_t config_layers = 0; // depth in the config, before --layers

  // Parameter count (embedding, lm_head when untied, norms, projections).
  int64_t parameter_count() const;
};

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
