// Small string helpers shared by the parsers: trimming, splitting, case folding, and the edit
// distance used to suggest the closest known names when a lookup fails.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ub {

std::string trim(std::string_view s);
std::string to_lower(std::string_view s);
// Splits on `sep`, trims each piece, drops empty pieces.
std::vector<std::string> split(std::string_view s, char sep);
// Levenshtein distance, case-insensitive.
size_t edit_distance(std::string_view a, std::string_view b);
// The `count` candidates closest to `name`, best first.
std::vector<std::string> closest(std::string_view name, const std::vector<std::string>& candidates,
                                 size_t count);
// A byte count as sizes are written on the command line: "4G", "16M", "8K" when it is a whole
// number of them, else the number.
std::string binary_size_text(int64_t bytes);

}  // namespace ub
