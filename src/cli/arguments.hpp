// Parsing of the values people type: sequence-length lists ("4096,8k,32k"; k = 1024), positive
// integers and prices. Every error names the option and the offending text (exit code 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ub::cli {

// "8192" -> 8192, "8k" -> 8192, "1M" -> 1048576. Throws UsageError naming `what`.
int64_t parse_size(const std::string& text, const std::string& what);
std::vector<int64_t> parse_size_list(const std::string& text, const std::string& what);
// A strictly positive number ("3.5", "1e12"). Throws UsageError naming `what`.
double parse_positive(const std::string& text, const std::string& what);
std::optional<double> parse_optional_positive(const std::string& text, const std::string& what);

}  // namespace ub::cli
