// "gpu=NVIDIA H200 attn_backend=flash_attention_3 zero=3" -> {gpu: "NVIDIA H200", ...}: a value
// runs until the next ` key=`, so values may contain spaces, as benchmark.py's headers do.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ub {

std::map<std::string, std::string> parse_key_values(std::string_view text);

// The pairs of a `# gpu=... key=value ...` header line (bench_flash_attn.py's and
// bench_decompose.py's), or nullopt for any other line.
std::optional<std::map<std::string, std::string>> gpu_header(std::string_view line);

}  // namespace ub
