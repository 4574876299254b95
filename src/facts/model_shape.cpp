// config.json parsing; see model_shape.hpp.
#include "facts/model_shape.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"
#include "facts/config_fields.hpp"
#include "facts/config_value.hpp"
#include "facts/layer_pattern.hpp"

namespace ub {

namespace {

using nlohmann::json;
using namespace config_value;

// rope_scaling (transformers 4.x) or rope_parameters (5.x, which also carries rope_theta).
RopeScaling read_rope(const json& r, const std::string& rw) {
  RopeScaling s;
  s.type = optional_typed(r, "rope_type", optional_typed(r, "type", std::string{"default"}, rw), rw);
  s.factor = optional_typed(r, "factor", 1.0, rw);
  s.low_freq_factor = optional_typed(r, "low_freq_factor", 1.0, rw);
  s.high_freq_factor = optional_typed(r, "high_freq_factor", 4.0, rw);
  s.original_max_position = optional_typed(r, "original_max_position_embeddings", int64_t{8192}, rw);
  // The rotary types transformers implements (ROPE_INIT_FUNCTIONS): another is a config of another
  // model, or a typo.
  static const std::set<std::string> kTypes = {"default", "linear", "dynamic", "yarn", "longrope", "llama3"};
  if (!kTypes.count(s.type)) {
    throw WorkError(fmt::format("{}: rope type '{}' is not one transformers implements (default, linear, dynamic, yarn, "
                                "longrope, llama3)", rw, printable(s.type)));
  }
  if (!(s.factor > 0) || !(s.low_freq_factor > 0) || !(s.high_freq_factor > 0) || s.original_max_position <= 0) {
    throw WorkError(fmt::format("{}: its factors and original_max_position_embeddings must be positive", rw));
  }
  return s;
}

void read_rope_fields(const json& c, ModelShape& m, const std::string& w) {
  m.rope_theta = optional_typed(c, "rope_theta", m.rope_theta, w);
  if (!(m.rope_theta > 0)) throw WorkError(fmt::format("{}: rope_theta must be positive", w));
  if (c.contains("rope_scaling") && !c.at("rope_scaling").is_null()) {
    if (!c.at("rope_scaling").is_object()) {
      throw WorkError(fmt::format("{}: rope_scaling must be an object (rope_type, factor, ...) or null", w));
    }
    m.rope_scaling = read_rope(c.at("rope_scaling"), w + ": rope_scaling");
  }
  if (!c.contains("rope_parameters") || !c.at("rope_parameters").is_object()) return;
  // Per layer type in Gemma 3's 5.x configs: the full layers' parameters are the model's.
  const json& all = c.at("rope_parameters");
  const json& r = all.contains("full_attention") && all.at("full_attention").is_object() ? all.at("full_attention") : all;
  const std::string rw = w + ": rope_parameters";
  m.rope_theta = optional_typed(r, "rope_theta", m.rope_theta, rw);
  const RopeScaling s = read_rope(r, rw);
  if (s.type != "default") m.rope_scaling = s;
}

// transformers' activations by name (its ACT2FN table, 4.5x and 5.x): a config naming another
// builds no model there, and its MLP would be counted as one it is not.
bool known_activation(const std::string& name) {
  static const std::set<std::string> known = {
      "gelu",   "gelu_10", "gelu_fast", "gelu_new", "gelu_python", "gelu_pytorch_tanh", "gelu_python_tanh",
      "gelu_accurate", "hardswish", "laplace", "leaky_relu", "linear", "mish", "quick_gelu", "relu", "relu2",
      "relu6", "sigmoid", "silu", "sqrtsoftplus", "swish", "tanh", "prelu", "xielu"};
  return known.count(name) > 0;
}

// What the Llama trunk lacks, by field and, where the config does not say it, by model type.
void read_variants(const json& c, ModelShape& m, const std::string& w) {
  m.mlp_activation = optional_typed(c, "hidden_activation", optional_typed(c, "hidden_act", std::string{"silu"}, w), w);
  if (!known_activation(m.mlp_activation)) {
    throw WorkError(fmt::format("{}: {} '{}' is not an activation transformers knows (silu, gelu_pytorch_tanh, ...): "
                                "its MLP cannot be counted", w, c.contains("hidden_activation") && !c.at("hidden_activation").is_null()
                                    ? "hidden_activation"
                                    : "hidden_act",
                                printable(m.mlp_activation)));
  }
  m.attention_bias = optional_typed(c, "attention_bias", false, w);
  m.mlp_bias = optional_typed(c, "mlp_bias", false, w);
  const bool gemma3 = m.model_type == "gemma3_text" || m.model_type == "gemma3";
  m.qk_norm = m.model_type == "qwen3" || m.model_type == "qwen3_moe" || gemma3;
  m.norms_per_layer = gemma3 || m.model_type == "gemma2" ? 4 : 2;
  if (c.contains("query_pre_attn_scalar") && !c.at("query_pre_attn_scalar").is_null()) {
    m.query_scale = optional_typed(c, "query_pre_attn_scalar", 0.0, w);
  }
  m.softcapping = (c.contains("attn_logit_softcapping") && !c.at("attn_logit_softcapping").is_null()) ||
                  (c.contains("final_logit_softcapping") && !c.at("final_logit_softcapping").is_null());
  if (optional_typed(c, "use_mrope", false, w)) {
    throw WorkError(fmt::format("{}: use_mrope true (Qwen2-VL's multimodal rotary positions) is not understood", w));
  }
  (void)optional_typed(c, "rope_local_base_freq", 0.0, w);  // the windowed layers' rotary base: no FLOP, no byte
}

// The weights of one layer's attention that take part in matrix products.
int64_t attention_matmul_params(const ModelShape& m) {
  const int64_t q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  return m.hidden * (q + 2 * kv) + q * m.hidden;
}

int64_t swiglu_params(int64_t hidden, int64_t inter) { return 3 * hidden * inter; }

// The weights of one layer's MLP a token multiplies: the dense MLP, or the router, `routed`
// experts and the shared ones (with Qwen2-MoE's gate of the shared expert).
int64_t mlp_matmul_params(const ModelShape& m, int64_t layer, int64_t routed) {
  if (!m.is_moe_layer(layer)) return swiglu_params(m.hidden, m.intermediate);
  const MoeShape& e = *m.moe;
  return m.hidden * e.experts + routed * swiglu_params(m.hidden, e.intermediate) +
         e.shared_experts * swiglu_params(m.hidden, e.shared_intermediate) + (e.shared_gate ? m.hidden : 0);
}

// Norm weights and biases of one layer: no matrix product, counted in parameters only.
int64_t layer_vector_params(const ModelShape& m) {
  const int64_t q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  return m.norms_per_layer * m.hidden + (m.qk_norm ? 2 * m.head_dim : 0) +
         (m.attention_bias ? q + 2 * kv + m.hidden : 0) + (m.mlp_bias ? 2 * m.intermediate + m.hidden : 0);
}

int64_t count_parameters(const ModelShape& m, bool active) {
  int64_t total = m.vocab * m.hidden * (m.tied_embeddings ? 1 : 2) + m.hidden;  // + final norm
  for (int64_t i = 0; i < m.layers; ++i) {
    const int64_t routed = m.moe ? (active ? m.moe->top_k : m.moe->experts) : 0;
    total += attention_matmul_params(m) + mlp_matmul_params(m, i, routed) + layer_vector_params(m);
  }
  return total;
}

}  // namespace

bool ModelShape::is_moe_layer(int64_t layer) const {
  if (!moe) return false;
  return moe_layers.empty() || moe_layers.at(static_cast<size_t>(layer));
}

int64_t ModelShape::window(int64_t layer) const {
  return windows.empty() ? 0 : windows.at(static_cast<size_t>(layer));
}

bool ModelShape::has_windows() const {
  return std::any_of(windows.begin(), windows.end(), [](int64_t w) { return w > 0; });
}

int64_t ModelShape::parameter_count() const { return count_parameters(*this, false); }

int64_t ModelShape::active_parameter_count() const { return count_parameters(*this, true); }

double layer_matmul_params(const ModelShape& m, int64_t layer) {
  return static_cast<double>(attention_matmul_params(m) + mlp_matmul_params(m, layer, m.moe ? m.moe->top_k : 0));
}

// No model comes near a quadrillion parameters: a config.json past it has a mistyped dimension
// (and its parameter counts would leave 64 bits).
constexpr double kMaxParameters = 1e15;

ModelShape parse_hf_config(const json& root, const std::string& where) {
  if (!root.is_object()) throw WorkError(fmt::format("{}: a config.json must be a JSON object", where));
  const bool nested = root.contains("text_config") && root.at("text_config").is_object();
  const json& c = nested ? root.at("text_config") : root;
  const std::string w = nested ? where + " (text_config)" : where;
  // The text model's widths are text_config's: the same field at the top level with another value
  // says the model twice, differently.
  if (nested) {
    for (const char* key : {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                            "num_key_value_heads", "head_dim", "vocab_size"}) {
      if (root.contains(key) && c.contains(key) && root.at(key) != c.at(key)) {
        throw WorkError(fmt::format("{}: {} is {} at the top level and {} in text_config: which is the model's is not "
                                    "known", where, key, root.at(key).dump(), c.at(key).dump()));
      }
    }
  }
  check_config_fields(c, w);
  ModelShape m;
  m.model_type = optional_typed(c, "model_type", std::string{}, w);
  refuse_absent_type_defaults(c, m.model_type, w);
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
  read_rope_fields(c, m, w);
  // RMSNorm's epsilon trains with the model (our step uses it): a small positive number, or left
  // out for the default; a string, a null or a negative one would be read as the default unsaid.
  if (c.contains("rms_norm_eps")) {
    const json& eps = c.at("rms_norm_eps");
    if (!eps.is_number() || !(eps.get<double>() > 0) || eps.get<double>() >= 1) {
      throw WorkError(fmt::format("{}: rms_norm_eps is {}: a number above 0 and below 1 (1e-5, 1e-6)", w, printable(eps.dump())));
    }
    m.rms_norm_eps = eps.get<double>();
  }
  // The initial weights' spread, where our step draws them: a positive number, or left out.
  if (c.contains("initializer_range")) {
    const json& r = c.at("initializer_range");
    if (!r.is_number() || !(r.get<double>() > 0) || r.get<double>() >= 1) {
      throw WorkError(fmt::format("{}: initializer_range is {}: a number above 0 and below 1 (0.02)", w, printable(r.dump())));
    }
  }
  if (c.contains("max_position_embeddings") && !c.at("max_position_embeddings").is_null()) {
    m.max_position = required_positive(c, "max_position_embeddings", w);
  }
  read_variants(c, m, w);
  m.windows = parse_windows(c, m.model_type, m.layers, w);
  m.moe = parse_moe(c, m.model_type, m.layers, m.moe_layers, w);
  check_model_type(m.model_type, m.has_windows(), m.moe.has_value(), w);
  m.config_layers = m.layers;
  // Each dimension is bounded, their products are not: a model past a quadrillion parameters is a
  // mistyped dimension, and its counts would leave 64 bits. An upper bound, in doubles.
  const double h = static_cast<double>(m.hidden), d = static_cast<double>(m.head_dim);
  double mlp = 3.0 * h * static_cast<double>(m.intermediate);
  if (m.moe) {
    mlp += 3.0 * h * static_cast<double>(m.moe->intermediate) * static_cast<double>(m.moe->experts) +
           3.0 * h * static_cast<double>(m.moe->shared_intermediate) * static_cast<double>(m.moe->shared_experts) +
           h * static_cast<double>(m.moe->experts);
  }
  const double bound = static_cast<double>(m.layers) *
                           (mlp + h * d * (2.0 * static_cast<double>(m.heads) + 2.0 * static_cast<double>(m.kv_heads))) +
                       2.0 * static_cast<double>(m.vocab) * h;
  if (bound > kMaxParameters) {
    throw WorkError(fmt::format("{}: up to {:.3g} parameters, beyond any model (at most {:g}): a dimension is mistyped",
                                w, bound, kMaxParameters));
  }
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
  const json root = parse_json_text(read_json_file(file, "a model's config.json"), file.string());
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
  if (!m.windows.empty()) m.windows.resize(static_cast<size_t>(layers));
  if (!m.moe_layers.empty()) m.moe_layers.resize(static_cast<size_t>(layers));
  return m;
}

}  // namespace ub
