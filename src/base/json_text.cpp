// Bounded JSON parsing; see json_text.hpp.
#include "base/json_text.hpp"

#include <fmt/format.h>

#include "base/error.hpp"

namespace ub {

bool json_depth_within(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

nlohmann::json parse_json_text(std::string_view text, const std::string& where) {
  if (!json_depth_within(text)) {
    throw WorkError(fmt::format("{}: JSON nested deeper than {} levels", where, kMaxJsonDepth));
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw WorkError(fmt::format("{}: not valid JSON: {}", where, e.what()));
  }
}

}  // namespace ub
