// Per-layer windows and experts from a config.json; the rules are in layer_pattern.hpp.
#include "facts/layer_pattern.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "facts/config_value.hpp"

namespace ub {

namespace {

using nlohmann::json;
using namespace config_value;

bool present(const json& c, const char* key) { return c.contains(key) && !c.at(key).is_null(); }

bool qwen_family(const std::string& model_type) { return model_type.starts_with("qwen"); }

// transformers' Qwen2Config / Qwen3Config (and their MoE) sliding_window default.
constexpr int64_t kQwenDefaultWindow = 4096;

// The window the config gives its windowed layers, or 0 when it gives none: a null
// sliding_window, or (Qwen) use_sliding_window false, which transformers reads as no window.
int64_t configured_window(const json& c, const std::string& model_type, const std::string& where) {
  const bool use = optional_typed(c, "use_sliding_window", !qwen_family(model_type), where);
  // Qwen's config classes default sliding_window to 4096: a config that turns windows on and
  // leaves the key out has that window (one that writes it null has none).
  if (use && qwen_family(model_type) && !c.contains("sliding_window")) return kQwenDefaultWindow;
  if (!use || !present(c, "sliding_window")) return 0;
  return required_positive(c, "sliding_window", where);
}

std::vector<int64_t> from_layer_types(const json& c, int64_t window, int64_t layers, const std::string& where) {
  const json& t = c.at("layer_types");
  if (!t.is_array() || static_cast<int64_t>(t.size()) != layers) {
    throw WorkError(fmt::format("{}: \"layer_types\" must list one type per layer ({}), got {}", where, layers,
                                t.is_array() ? fmt::format("{} entries", t.size()) : t.dump()));
  }
  std::vector<int64_t> w(static_cast<size_t>(layers), 0);
  for (size_t i = 0; i < t.size(); ++i) {
    const std::string type = t[i].is_string() ? t[i].get<std::string>() : t[i].dump();
    if (type == "full_attention") continue;
    if (type != "sliding_attention") {
      throw WorkError(fmt::format("{}: layer {} has type '{}', which is not understood: upgradebench counts "
                                  "full_attention and sliding_attention layers only", where, i, type));
    }
    // transformers writes sliding_attention only where a window is configured: a layer named so
    // without one would be counted as full attention unsaid.
    if (window == 0) {
      throw WorkError(fmt::format("{}: layer {} is sliding_attention, and the config gives no window (sliding_window "
                                  "null or absent{}): which is meant is not known", where, i,
                                  present(c, "use_sliding_window") ? ", or use_sliding_window false" : ""));
    }
    w[i] = window;
  }
  return w;
}

}  // namespace

namespace {

// How a model type's transformers config class takes a window field beside sliding_window: reads
// it; ignores it (Qwen3-MoE's max_window_layers, which its checkpoints carry); or does not know it,
// and a config that gives it describes another model (refused).
enum class Field { read, ignored, refused };
struct WindowFields {
  Field layer_types, max_window_layers;
};
WindowFields window_fields(const std::string& model_type) {
  if (model_type == "qwen3_moe") return {Field::refused, Field::ignored};
  if (qwen_family(model_type)) return {Field::read, Field::read};  // qwen2, qwen3, qwen2_moe
  if (model_type == "mistral" || model_type == "mixtral") return {Field::refused, Field::refused};
  // Gemma's, and the types without windows (their windows are refused by check_model_type).
  return {Field::read, Field::refused};
}

void refuse_unread_window_fields(const json& c, const std::string& model_type, const std::string& where) {
  if (model_type.empty()) {  // a config without a type is taken as it says, where what it says has one reading
    for (const char* qwen_only : {"use_sliding_window", "max_window_layers"}) {
      if (present(c, qwen_only)) {
        throw WorkError(fmt::format("{}: no model_type, and {} is read by Qwen's configs alone, each its own way: add "
                                    "the model_type the checkpoint has", where, qwen_only));
      }
    }
    return;
  }
  if (present(c, "use_sliding_window") && !qwen_family(model_type)) {
    throw WorkError(fmt::format("{}: use_sliding_window is not read by model_type '{}' (Qwen's configs read it): a "
                                "config of another model?", where, model_type));
  }
  const WindowFields read = window_fields(model_type);
  if (present(c, "layer_types") && read.layer_types == Field::refused) {
    throw WorkError(fmt::format("{}: layer_types is not read by model_type '{}' (its code gives every layer the "
                                "config's sliding_window): a config of another model (Ministral, Qwen3)?", where,
                                model_type));
  }
  if (present(c, "max_window_layers") && read.max_window_layers == Field::refused) {
    throw WorkError(fmt::format("{}: max_window_layers is not read by model_type '{}' (Qwen2's and Qwen3's configs "
                                "read it): a config of another model?", where, model_type));
  }
}

}  // namespace

std::vector<int64_t> parse_windows(const json& c, const std::string& model_type, int64_t layers,
                                   const std::string& where) {
  refuse_unread_window_fields(c, model_type, where);
  const int64_t window = configured_window(c, model_type, where);
  std::vector<int64_t> w(static_cast<size_t>(layers), 0);
  const bool gemma3 = model_type == "gemma3_text" || model_type == "gemma3";
  if (model_type == "qwen3_moe") {  // its attention takes sliding_window in every layer
    std::fill(w.begin(), w.end(), window);
  } else if (present(c, "layer_types")) {
    w = from_layer_types(c, window, layers, where);
  } else if (present(c, "sliding_window_pattern") || present(c, "_sliding_window_pattern") || gemma3) {
    const char* key = present(c, "sliding_window_pattern") ? "sliding_window_pattern" : "_sliding_window_pattern";
    const int64_t p = optional_positive(c, key, 6, where);
    for (int64_t i = 0; i < layers; ++i) w[static_cast<size_t>(i)] = (i + 1) % p != 0 ? window : 0;
  } else if (model_type == "gemma2" || model_type == "cohere2") {
    throw WorkError(fmt::format("{}: model_type '{}' alternates windowed and full layers in its code, not its "
                                "config: give its layer_types", where, model_type));
  } else if (qwen_family(model_type)) {
    const int64_t bound = optional_typed(c, "max_window_layers", int64_t{28}, where);  // Qwen2/3's default
    if (bound < 0) {
      throw WorkError(fmt::format("{}: max_window_layers {} is below 0: it counts layers", where, bound));
    }
    for (int64_t i = 0; i < layers; ++i) {
      // Qwen2-MoE's config windows the even layers below the bound; Qwen2's and Qwen3's the
      // layers from the bound on.
      const bool windowed = model_type == "qwen2_moe" ? (i + 1) % 2 != 0 && i < bound : i >= bound;
      if (windowed) w[static_cast<size_t>(i)] = window;
    }
  } else {
    std::fill(w.begin(), w.end(), window);
  }
  if (std::all_of(w.begin(), w.end(), [](int64_t x) { return x == 0; })) return {};
  return w;
}

namespace {

const char* expert_count_key(const json& c) {
  for (const char* k : {"num_local_experts", "n_routed_experts", "num_experts"}) {
    if (present(c, k)) return k;
  }
  return nullptr;
}

void read_shared_experts(const json& c, MoeShape& m, const std::string& where) {
  const int64_t qwen = optional_count(c, "shared_expert_intermediate_size", where);
  const int64_t deepseek = optional_count(c, "n_shared_experts", where);
  if (qwen > 0 && deepseek > 0) {
    throw WorkError(fmt::format("{}: give shared_expert_intermediate_size or n_shared_experts, not both", where));
  }
  if (qwen > 0) m.shared_experts = 1, m.shared_intermediate = qwen, m.shared_gate = true;
  if (deepseek > 0) m.shared_experts = deepseek, m.shared_intermediate = m.intermediate;
}

// The mixture-of-experts fields each family's config class reads: a field of another family in a
// config of a known one is read by no code that runs it (DeepSeek's first_k_dense_replace in a
// Qwen3-MoE config makes no layer dense there), so counting it would count another model.
void refuse_other_families_fields(const json& c, const std::string& model_type, const std::string& where) {
  static const std::set<std::string> qwen = {"qwen2_moe", "qwen3_moe"}, deepseek = {"deepseek_v2", "deepseek_v3"},
                                     mixtral = {"mixtral"};
  if (!qwen.count(model_type) && !deepseek.count(model_type) && !mixtral.count(model_type)) return;
  std::set<std::string> both = qwen;  // Mixtral's experts are intermediate_size wide, its top-k always renormalised
  both.insert(deepseek.begin(), deepseek.end());
  const std::vector<std::pair<const char*, std::set<std::string>>> readers = {
      {"first_k_dense_replace", deepseek}, {"n_routed_experts", deepseek}, {"n_shared_experts", deepseek},
      {"scoring_func", deepseek},          {"decoder_sparse_step", qwen},  {"mlp_only_layers", qwen},
      {"shared_expert_intermediate_size", {"qwen2_moe"}}, {"num_experts", qwen}, {"num_local_experts", mixtral},
      {"router_jitter_noise", mixtral}, {"moe_intermediate_size", both}, {"norm_topk_prob", both}};
  for (const auto& [field, read_by] : readers) {
    if (present(c, field) && !read_by.count(model_type)) {
      throw WorkError(fmt::format("{}: {} is not read by model_type '{}' (it is {}'s): a config of another model?", where,
                                  field, model_type, fmt::join(read_by, "'s and ")));
    }
  }
}

std::vector<bool> which_layers_have_experts(const json& c, int64_t layers, const std::string& where) {
  const int64_t step = optional_positive(c, "decoder_sparse_step", 1, where);
  const int64_t first_dense = optional_count(c, "first_k_dense_replace", where);
  std::vector<bool> moe(static_cast<size_t>(layers));
  for (int64_t i = 0; i < layers; ++i) moe[static_cast<size_t>(i)] = i >= first_dense && (i + 1) % step == 0;
  if (!present(c, "mlp_only_layers")) return moe;
  const json& only = c.at("mlp_only_layers");
  if (!only.is_array()) throw WorkError(fmt::format("{}: \"mlp_only_layers\" must be a list of layer indices", where));
  for (const json& i : only) {
    if (!i.is_number_integer() || i.get<int64_t>() < 0 || i.get<int64_t>() >= layers) {
      throw WorkError(fmt::format("{}: mlp_only_layers holds {}, not a layer index below {}", where, i.dump(), layers));
    }
    moe[static_cast<size_t>(i.get<int64_t>())] = false;
  }
  return moe;
}

}  // namespace

std::optional<MoeShape> parse_moe(const json& c, const std::string& model_type, int64_t layers,
                                  std::vector<bool>& moe_layers, const std::string& where) {
  refuse_other_families_fields(c, model_type, where);
  const char* count_key = expert_count_key(c);
  if (!count_key || optional_count(c, count_key, where) == 0) {
    if (model_type == "mixtral" || model_type.ends_with("_moe")) {
      throw WorkError(fmt::format("{}: model_type '{}' is a mixture of experts but the config gives no expert count",
                                  where, model_type));
    }
    return std::nullopt;
  }
  MoeShape m;
  m.experts = required_positive(c, count_key, where);
  m.top_k = required_positive(c, "num_experts_per_tok", where);
  if (m.top_k > m.experts) {
    throw WorkError(fmt::format("{}: num_experts_per_tok {} is more than the {} experts", where, m.top_k, m.experts));
  }
  // Mixtral's experts are intermediate_size wide; Qwen-MoE and DeepSeek give them their own size.
  m.intermediate = required_positive(c, present(c, "moe_intermediate_size") ? "moe_intermediate_size" : "intermediate_size", where);
  read_shared_experts(c, m, where);
  const std::string scoring = optional_typed(c, "scoring_func", std::string{"softmax"}, where);
  if (scoring != "softmax" && scoring != "sigmoid") {
    throw WorkError(fmt::format("{}: scoring_func '{}' is not understood (softmax or sigmoid)", where, scoring));
  }
  m.scoring = scoring == "sigmoid" ? RouterScoring::sigmoid : RouterScoring::softmax;
  // Mixtral's block always renormalises its top-k weights; the others say so in norm_topk_prob.
  m.normalize_top_k = optional_typed(c, "norm_topk_prob", model_type == "mixtral", where);
  m.aux_loss = optional_typed(c, "output_router_logits", false, where);
  m.aux_loss_coef = optional_typed(c, "router_aux_loss_coef", 0.001, where);
  if (optional_typed(c, "router_jitter_noise", 0.0, where) != 0.0) {
    throw WorkError(fmt::format("{}: router_jitter_noise {} is not understood: upgradebench routes without noise",
                                where, c.at("router_jitter_noise").dump()));
  }
  moe_layers = which_layers_have_experts(c, layers, where);
  return m;
}

}  // namespace ub
