// key=value header parsing; see key_values.hpp.
#include "base/key_values.hpp"

#include <fmt/format.h>

#include <cctype>
#include <vector>

#include "base/error.hpp"
#include "base/text.hpp"

namespace ub {

namespace {
bool key_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}
}  // namespace

std::map<std::string, std::string> parse_key_values(std::string_view text, const std::string& where) {
  // Find every "key=" that starts the text or follows a space.
  struct Key { size_t start, value_start; std::string name; };
  std::vector<Key> keys;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '=' || i == 0) continue;
    size_t b = i;
    while (b > 0 && key_char(text[b - 1])) --b;
    if (b == i || (b > 0 && text[b - 1] != ' ' && text[b - 1] != '\t')) continue;
    keys.push_back({b, i + 1, std::string(text.substr(b, i - b))});
  }
  std::map<std::string, std::string> out;
  for (size_t k = 0; k < keys.size(); ++k) {
    const size_t end = k + 1 < keys.size() ? keys[k + 1].start : text.size();
    const std::string value = trim(text.substr(keys[k].value_start, end - keys[k].value_start));
    const auto [it, fresh] = out.emplace(keys[k].name, value);
    if (!fresh) {
      throw WorkError(fmt::format("{}: {}= is given twice in one header line ({} and {}): which is meant is not known",
                                  where, printable(keys[k].name), printable(it->second), printable(value)));
    }
  }
  return out;
}

std::optional<std::map<std::string, std::string>> gpu_header(std::string_view line, const std::string& where) {
  if (line.empty() || line[0] != '#') return std::nullopt;
  auto kv = parse_key_values(line.substr(1), where);
  if (!kv.contains("gpu")) return std::nullopt;
  return kv;
}

}  // namespace ub
