// What varies from layer to layer in a config.json: which layers have a mixture-of-experts MLP,
// and which attend through a sliding window. transformers spells each several ways over its
// model families and versions; they are read here, into one per-layer description.
//
// Windows, in the order transformers itself resolves them, each model type reading only the
// fields its config class reads (another is refused; Qwen3-MoE's max_window_layers, which its
// checkpoints carry and its class ignores, is ignored):
//   layer_types (4.5x+ / 5.x: Gemma 2/3, gpt-oss, Qwen2/3, Qwen2-MoE; not Mistral, Mixtral,
//       Qwen3-MoE): "sliding_attention" has the window, "full_attention" not; any other type
//       is refused by name.
//   sliding_window_pattern p (Gemma 3; its default 6 when a gemma3 config omits it): layer i is
//       full when (i + 1) % p == 0, windowed otherwise (five windowed, one full).
//   use_sliding_window (Qwen's; default false there): when true, Qwen2 / Qwen3 window the layers
//       i >= max_window_layers, Qwen2-MoE the even layers i < max_window_layers, Qwen3-MoE every
//       layer; none when false.
//   otherwise a sliding_window that is not null windows every layer (Mistral v0.1, Mixtral).
// Gemma 2 and Cohere 2 alternate windows in code, not in their config: without layer_types they
// are refused rather than guessed.
//
// MoE layers (Qwen-MoE's rule, DeepSeek's first_k_dense_replace): layer i has experts unless it is
// in mlp_only_layers, or i < first_k_dense_replace, or (i + 1) % decoder_sparse_step != 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "facts/model_shape.hpp"

namespace ub {

// One entry per layer (0 full, else the window); empty when no layer has a window.
std::vector<int64_t> parse_windows(const nlohmann::json& c, const std::string& model_type, int64_t layers,
                                   const std::string& where);

// The MoE description, or nullopt for a dense config (no expert count). `moe_layers` receives one
// entry per layer.
std::optional<MoeShape> parse_moe(const nlohmann::json& c, const std::string& model_type, int64_t layers,
                                  std::vector<bool>& moe_layers, const std::string& where);

}  // namespace ub
