// A bound on what compiling an extended regular expression may cost. regcomp builds an automaton
// whose size is the product of the pattern's counted repetitions ({m,n}): a 30-byte pattern such
// as (a{1,100}){1,100}{1,100} takes gigabytes before it fails. Patterns from the command line and
// from a --classes file are held to this bound first, and refused naming it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace ub {

inline constexpr size_t kMaxPatternBytes = 1024;
inline constexpr int64_t kMaxPatternRepetition = 1000;  // the product of the counts of {m,n}

// A file of patterns (--classes) is held to a budget of them all: many patterns each within the
// bound would cost as much as one past it. A pattern's cost is its repetition product (at least 1).
inline constexpr int64_t kMaxPatternsCost = 5000;

// The product of the counts of `pattern`'s {m,n} repetitions, capped past kMaxPatternRepetition.
inline int64_t pattern_repetitions(const std::string& pattern) {
  int64_t product = 1;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      ++i;  // an escaped brace is a character
      continue;
    }
    if (pattern[i] != '{') continue;
    // The larger count of {m}, {m,} or {m,n}.
    int64_t count = 0, current = 0;
    size_t j = i + 1;
    for (; j < pattern.size() && pattern[j] != '}'; ++j) {
      const char c = pattern[j];
      if (c >= '0' && c <= '9') {
        current = std::min<int64_t>(current * 10 + (c - '0'), kMaxPatternRepetition + 1);
      } else if (c == ',') {
        count = std::max(count, current), current = 0;
      } else {
        break;  // not a count: a brace as a character
      }
    }
    count = std::max(count, current);
    if (count > 1) product = std::min<int64_t>(product * count, kMaxPatternRepetition + 1);
    if (product > kMaxPatternRepetition) return product;
  }
  return product;
}

// Why `pattern` would cost too much to compile, or nullopt.
inline std::optional<std::string> pattern_too_costly(const std::string& pattern) {
  if (pattern.size() > kMaxPatternBytes) {
    return fmt::format("{} bytes, more than the {} a pattern may have", pattern.size(), kMaxPatternBytes);
  }
  if (pattern_repetitions(pattern) > kMaxPatternRepetition) {
    return fmt::format("its counted repetitions ({{m,n}}) multiply past {} copies of what they repeat",
                       kMaxPatternRepetition);
  }
  return std::nullopt;
}

}  // namespace ub
