// Which fields of a Hugging Face config.json upgradebench knows. A config is a model's whole
// architecture in a few dozen fields; a field we do not read may be one that changes it (attention
// sinks, latent attention, a capped SwiGLU, a grouped router), and counting FLOPs or memory
// without it is counting another model. So every field of the text model's config must be one
// the parser interprets, or one known to leave the architecture alone (token ids, the dtype,
// generation defaults, dropout); any other is refused by name, before anything is counted.
//
// The list is of fields, not of values: an interpreted field with a value the parser cannot
// describe is refused where it is read (model_shape.cpp, layer_pattern.cpp).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace ub {

// Throws WorkError naming the first field of `config` (an object) that is neither interpreted nor
// known to be harmless.
void check_config_fields(const nlohmann::json& config, const std::string& where);

// The model types whose transformers code the parser describes, and which of them attend through
// sliding windows or route to experts: a window or experts read from the config of a type whose
// code has none (a llama config with sliding_window) would count a model that does not run.
// WorkError for a model_type not listed (empty: a hand-written config, taken as it says), or for
// windows or experts its code does not have.
void check_model_type(const std::string& model_type, bool windows, bool experts, const std::string& where);

// WorkError for a config of `model_type` that leaves out a field whose default in the type's
// transformers config class is not what a missing field is read as here (Mistral's 8 KV heads and
// 4096-token window, Qwen-MoE's expert widths): the model counted would not be the one built.
void refuse_absent_type_defaults(const nlohmann::json& config, const std::string& model_type, const std::string& where);

}  // namespace ub
