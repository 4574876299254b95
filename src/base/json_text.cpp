// Bounded JSON parsing; see json_text.hpp.
#include "base/json_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "base/error.hpp"
#include "base/gzip_reader.hpp"
#include "base/text.hpp"

namespace ub {

namespace {

// nlohmann's own DOM builder, told each object's keys on the way, to refuse one given twice
// ({"warmup": false, ..., "warmup": true}): the parser would keep the last without a word. (Its
// callback parser could tell them too, but it scans an object's members after each nested value
// ends: minutes for a checkpoint index of tens of thousands of tensors.)
class KeysOnce : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
 public:
  explicit KeysOnce(nlohmann::json& root) : json_sax_dom_parser(root) {}
  std::string twice;  // the first key given twice, "" when none was

  bool start_object(std::size_t n) {
    open_.emplace_back();
    return json_sax_dom_parser::start_object(n);
  }
  bool end_object() {
    if (!open_.empty()) open_.pop_back();
    return json_sax_dom_parser::end_object();
  }
  bool key(std::string& k) {
    if (!open_.empty() && twice.empty() && !open_.back().add(k)) twice = k;
    return json_sax_dom_parser::key(k);
  }

 private:
  // A record has tens of keys, where a scan beats a hash; a checkpoint's index or header tens of
  // thousands.
  struct Keys {
    std::vector<std::string> few;
    std::unordered_set<std::string> many;
    bool add(const std::string& k) {  // false when it is there already
      if (many.empty() && few.size() < 32) {
        if (std::find(few.begin(), few.end(), k) != few.end()) return false;
        few.push_back(k);
        return true;
      }
      if (many.empty()) many.insert(few.begin(), few.end());
      return many.insert(k).second;
    }
  };
  std::vector<Keys> open_;
};

}  // namespace

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
  // nlohmann's lexer takes a NUL byte for the end of its input: what follows one would be dropped
  // unread ({"a": 1}\0garbage parses, and a record line cut there loses its rest).
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    throw WorkError(fmt::format("{}: a NUL byte at offset {}: not JSON text", where, nul));
  }
  nlohmann::json j;
  KeysOnce sax(j);
  try {
    nlohmann::json::sax_parse(text, &sax);
  } catch (const nlohmann::json::exception& e) {
    throw WorkError(fmt::format("{}: not valid JSON: {}", where, json_error_text(e)));
  }
  const std::string& twice = sax.twice;
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
  // Read as it is, or decompressed when gzip wrote it (a manifest or a config kept compressed).
  GzipReader in(where, where);
  std::string text;
  char buf[65536];
  while (const size_t n = in.read(buf, sizeof buf)) {
    text.append(buf, n);
    if (text.size() > kMaxJsonFileBytes) {
      throw UsageError(fmt::format("{}: larger than {} MiB{}: not {}", where, kMaxJsonFileBytes >> 20,
                                   in.direct() ? "" : " decompressed", what));
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
