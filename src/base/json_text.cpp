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
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw WorkError(fmt::format("{}: empty: not a JSON document", where));
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw WorkError(fmt::format("{}: not valid JSON: {}", where, json_error_text(e)));
  }
}

std::string read_json_file_text(std::istream& in, const std::string& where, const std::string& what) {
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxJsonFileBytes) {
      throw UsageError(fmt::format("{}: larger than {} MiB: not {}", where, kMaxJsonFileBytes >> 20, what));
    }
  }
  return text;
}

std::string json_error_text(const nlohmann::json::exception& e) {
  const std::string_view w = e.what();
  const size_t tag = w.rfind("] ", w.find(' ') == std::string_view::npos ? w.size() : w.find(' ') + 1);
  return std::string(w.substr(0, 1) == "[" && tag != std::string_view::npos ? w.substr(tag + 2) : w);
}

}  // namespace ub
