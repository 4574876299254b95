// JSON read from files, within bounds: nesting deeper than kMaxJsonDepth levels is refused before
// the parser sees it (no log nests more than a few, and a million-deep value must not exhaust the
// stack), and every failure is a WorkError naming where.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ub {

inline constexpr size_t kMaxJsonDepth = 64;

// Whether no array or object in `text` nests deeper than `max_depth` (strings are skipped).
bool json_depth_within(std::string_view text, size_t max_depth = kMaxJsonDepth);

// `text` parsed; WorkError("<where>: ...") when it nests too deep or is not JSON.
nlohmann::json parse_json_text(std::string_view text, const std::string& where);

}  // namespace ub
