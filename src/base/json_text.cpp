// Bounded JSON parsing; see json_text.hpp.
#include "base/json_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include "base/error.hpp"
#include "base/text.hpp"

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
  // The keys of each object open, to refuse one given twice ({"warmup": false, ..., "warmup":
  // true}): the parser would keep the last without a word.
  std::vector<std::vector<std::string>> open;  // a record has tens of keys: a scan beats a tree
  std::string twice;
  const auto watch = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      open.emplace_back();
    } else if (event == Event::object_end) {
      if (!open.empty()) open.pop_back();
    } else if (event == Event::key && !open.empty() && twice.empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      std::vector<std::string>& keys = open.back();
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) twice = key;
      else keys.push_back(key);
    }
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, watch);
  } catch (const nlohmann::json::exception& e) {
    throw WorkError(fmt::format("{}: not valid JSON: {}", where, json_error_text(e)));
  }
  if (!twice.empty()) {
    throw ContradictoryJson(fmt::format("{}: the key \"{}\" is given twice in one object: which value is meant is not known",
                                where, printable(twice)));
  }
  return j;
}

std::string read_json_file(const std::filesystem::path& file, const std::string& what) {
  const std::string where = file.string();
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(file, ec);
  if (ec || !std::filesystem::exists(st)) {
    throw UsageError(fmt::format("{}: cannot be read ({}): not {}", where, ec ? ec.message() : "no such file", what));
  }
  if (!std::filesystem::is_regular_file(st)) {
    throw UsageError(fmt::format("{}: not a file (a pipe, a device or a folder): {} is read from a file", where, what));
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot be read: not {}", where, what));
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
