// JSON read from files, within bounds: nesting deeper than kMaxJsonDepth levels is refused before
// the parser sees it (no log nests more than a few, and a million-deep value must not exhaust the
// stack), and every failure is a WorkError naming where.
#pragma once

#include <cstddef>
#include <filesystem>
#include <istream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/error.hpp"

namespace ub {

inline constexpr size_t kMaxJsonDepth = 64;

// Whether no array or object in `text` nests deeper than `max_depth` (strings are skipped).
bool json_depth_within(std::string_view text, size_t max_depth = kMaxJsonDepth);

// JSON that parses but says two things: an object giving one key twice. Not a damaged line (the
// readers that skip those with a warning refuse this one): which value is meant is not known.
class ContradictoryJson : public WorkError {
 public:
  using WorkError::WorkError;
};

// `text` parsed; WorkError("<where>: ...") when it nests too deep or is not JSON, ContradictoryJson
// when an object gives a key twice.
nlohmann::json parse_json_text(std::string_view text, const std::string& where);

// A JSON library error in words: nlohmann's message without its "[json.exception.NAME.ID] " tag.
std::string json_error_text(const nlohmann::json::exception& e);

// A JSON file read whole (a model config, the catalog, kernel classes, a suite's manifest or env):
// none is near this size, and a device or a pipe given as one (/dev/zero) must not fill memory.
inline constexpr size_t kMaxJsonFileBytes = size_t{16} << 20;

// The text of the JSON file `file`, `what` it is ("a model's config.json"), decompressed when
// gzip wrote it: UsageError naming it when it is not a regular file (a pipe would block its
// opening or be read forever, a device never ends), cannot be read, or is larger than
// kMaxJsonFileBytes; WorkError for damaged gzip data.
std::string read_json_file(const std::filesystem::path& file, const std::string& what);

}  // namespace ub
