// config.json parsing; see model_shape.hpp.
#include "facts/model_shape.hpp"

#include <fmt/format.h>

#include <type_traits>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"

namespace ub {

namespace {

using nlohmann::json;

// Every dimension of a model is at most 2^24 (the largest vocabularies are ~2^18): products of a
// few of them (parameters, activations per token) then stay far inside 64 bits and exact in a double.
constexpr int64_t kMaxDimension = int64_t{1} << 24;

int64_t required_positive(const json& c, const char* key, const std::string& where) {
  if (!c.contains(key)) throw WorkError(fmt::format("{}: missing required key \"{}\"", where, key));
  const json& v = c.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > kMaxDimension) {
    throw WorkError(fmt::format("{}: \"{}\" must be a positive integer up to {}, got {}", where, key, kMaxDimension,
                                v.dump()));
  }
  return v.get<int64_t>();
}

// An optional field of one JSON type: `fallback` when absent or null, a WorkError naming the file
// and the field when it holds another type (nlohmann's own error names neither).
template <class T>
T optional_typed(const json& c, const char* key, T fallback, const std::string& where) {
  if (!c.contains(key) || c.at(key).is_null()) return fallback;
  const json& v = c.at(key);
  const bool ok = std::is_same_v<T, bool>          ? v.is_boolean()
                  : std::is_same_v<T, std::string> ? v.is_string()
                  : std::is_integral_v<T>          ? v.is_number_integer()
                                                   : v.is_number();
  if (!ok) {
    const char* kind = std::is_same_v<T, bool>          ? "true or false"
                       : std::is_same_v<T, std::string> ? "a string"
                       : std::is_integral_v<T>          ? "an integer"
                                                        : "a number";
    throw WorkError(fmt::format("{}: \"{}\" must be {}, got {}", where, key, kind, v.dump()));
  }
  return v.get<T>();
}

int64_t optional_positive(const json& c, const char* key, int64_t fallback,
                          const std::string& where) {
  if (!c.contains(key) || c.at(key).is_null()) return fallback;
  return required_positive(c, key, where);
}

}  // namespace

int64_t ModelShape::parameter_count() const {
  const int64_t q = heads * head_dim, kv = kv_heads * head_dim;
  const int64_t per_layer = hidden * (q + 2 * kv) + q * hidden  // attention projections
                            + 3 * hidden * intermediate          // gate, up, down
                            + 2 * hidden;                        // two RMSNorm weights
  const int64_t embeddings = vocab * hidden * (tied_embeddings ? 1 : 2);
  return per_layer * layers + embeddings + hidden;  // + final norm
}

ModelShape parse_hf_config(const json& root, const std::string& where) {
  if (!root.is_object()) throw WorkError(fmt::format("{}: a config.json must be a JSON object", where));
  const bool nested = root.contains("text_config") && root.at("text_config").is_object();
  const json& c = nested ? root.at("text_config") : root;
  const std::string w = nested ? where + " (text_config)" : where;
  ModelShape m;
  m.hidden = required_positive(c, "hidden_size", w);
  m.intermediate = required_positive(c, "intermediate_size", w);
  m.layers = required_positive(c, "num_hidden_layers", w);
  m.heads = required_positive(c, "num_attention_heads", w);
  m.kv_heads = optional_positive(c, "num_key_value_heads", m.heads, w);
  m.vocab = required_positive(c, "vocab_size", w);
  if (!c.contains("head_dim") || c.at("head_dim").is_null()) {
    if (m.hidden % m.heads != 0) {
      throw WorkError(fmt::format("{}: hidden_size {} is not divisible by num_attention_heads {} "
                                  "and no head_dim is given", w, m.hidden, m.heads));
    }
    m.head_dim = m.hidden / m.heads;
  } else {
    m.head_dim = required_positive(c, "head_dim", w);
  }
  if (m.heads % m.kv_heads != 0) {
    throw WorkError(fmt::format("{}: num_attention_heads {} is not a multiple of "
                                "num_key_value_heads {}", w, m.heads, m.kv_heads));
  }
  // tie_word_embeddings may sit at the top level of a multimodal config.
  const json& tie_src = c.contains("tie_word_embeddings") ? c : root;
  m.tied_embeddings = optional_typed(tie_src, "tie_word_embeddings", false, w);
  if (c.contains("rope_theta") && c.at("rope_theta").is_number()) {
    m.rope_theta = c.at("rope_theta").get<double>();
  }
  if (c.contains("rms_norm_eps") && c.at("rms_norm_eps").is_number()) {
    m.rms_norm_eps = c.at("rms_norm_eps").get<double>();
  }
  if (c.contains("max_position_embeddings") && c.at("max_position_embeddings").is_number_integer()) {
    m.max_position = c.at("max_position_embeddings").get<int64_t>();
  }
  if (c.contains("rope_scaling") && c.at("rope_scaling").is_object()) {
    const json& r = c.at("rope_scaling");
    RopeScaling s;
    const std::string rw = w + ": rope_scaling";
    s.type = optional_typed(r, "rope_type", optional_typed(r, "type", std::string{"default"}, rw), rw);
    s.factor = optional_typed(r, "factor", 1.0, rw);
    s.low_freq_factor = optional_typed(r, "low_freq_factor", 1.0, rw);
    s.high_freq_factor = optional_typed(r, "high_freq_factor", 4.0, rw);
    s.original_max_position = optional_typed(r, "original_max_position_embeddings", int64_t{8192}, rw);
    m.rope_scaling = s;
  }
  m.config_layers = m.layers;
  return m;
}

std::vector<std::string> list_presets(const std::filesystem::path& models_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(models_dir, ec)) {
    if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

ModelShape load_model(const std::string& name, const std::filesystem::path& models_dir) {
  const bool looks_like_path = name.find('/') != std::string::npos ||
                               name.ends_with(".json") || std::filesystem::exists(name);
  std::filesystem::path file;
  if (looks_like_path) {
    file = name;
    if (std::filesystem::is_directory(file)) file /= "config.json";
    if (!std::filesystem::exists(file)) {
      throw UsageError(fmt::format("model config '{}' does not exist", file.string()));
    }
  } else {
    file = models_dir / (to_lower(name) + ".json");
    if (!std::filesystem::exists(file)) {
      auto presets = list_presets(models_dir);
      if (presets.empty()) {
        throw UsageError(fmt::format("unknown model '{}': the data directory has no model presets ({} is missing or "
                                     "empty; give a path to a config.json, or a --data-dir with models/)",
                                     name, models_dir.string()));
      }
      throw UsageError(fmt::format("unknown model '{}'; closest presets: {} (or give a path to a "
                                   "config.json)", name, fmt::join(closest(name, presets, 3), ", ")));
    }
  }
  std::ifstream in(file);
  if (!in) throw UsageError(fmt::format("{}: cannot read", file.string()));
  const json root = parse_json_text(read_json_file_text(in, file.string(), "a model's config.json"), file.string());
  ModelShape m = parse_hf_config(root, file.string());
  m.id = looks_like_path ? file.string() : to_lower(name);
  return m;
}

ModelShape with_layers(ModelShape m, int64_t layers) {
  if (layers <= 0) throw UsageError(fmt::format("--layers must be positive, got {}", layers));
  if (layers > m.config_layers) {
    throw UsageError(fmt::format("--layers {} is more than the {} layers of {}", layers,
                                 m.config_layers, m.id));
  }
  m.layers = layers;
  return m;
}

}  // namespace ub
