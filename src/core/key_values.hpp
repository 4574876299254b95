// "gpu=NVIDIA H200 attn_backend=flash_attention_3 zero=3" -> {gpu: "NVIDIA H200", ...}: a value
// runs until the next ` key=`, so values may contain spaces, as benchmark.py's headers do.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace ub {

std::map<std::string, std::string> parse_key_values(std::string_view text);

}  // namespace ub
