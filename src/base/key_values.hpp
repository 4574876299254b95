// "gpu=NVIDIA H200 attn_backend=flash_attention_3 zero=3" -> {gpu: "NVIDIA H200", ...}: a value
// runs until the next ` key=`, so values may contain spaces, as benchmark.py's headers do.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ub {

// A key given twice (`gpu=NVIDIA H200 ... gpu=NVIDIA B200`) says two things: WorkError naming
// `where` and the key, since which value is meant is not known.
std::map<std::string, std::string> parse_key_values(std::string_view text, const std::string& where);

// The pairs of a `# gpu=... key=value ...` header line (bench_flash_attn.py's and
// bench_decompose.py's), or nullopt for any other line; WorkError as parse_key_values.
std::optional<std::map<std::string, std::string>> gpu_header(std::string_view line, const std::string& where);

}  // namespace ub
