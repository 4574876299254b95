// A text file as numbered lines, with whether its last line was cut short (no final newline),
// which every reader tolerates for a log that was still being written.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace ub {

// No log line comes near this; a longer one is a file that is not a log (or an attack on the
// readers): read_text_lines refuses it, naming the line.
inline constexpr size_t kMaxLineBytes = size_t{1} << 20;

// Lines matched against a regular expression are at most this long (std::regex recurses per
// character: tens of kB of digits exhaust the stack); longer ones are other lines.
inline constexpr size_t kMaxPatternLine = 1024;

struct TextLines {
  std::string path;
  std::vector<std::string> lines;  // without the newline
  bool last_line_unterminated = false;

  bool is_last(size_t index) const { return index + 1 == lines.size(); }
  // "path:line" for messages (index is 0-based, lines print 1-based).
  std::string where(size_t index) const;
};

// Throws UsageError when the file does not exist or cannot be read.
TextLines read_text_lines(const std::filesystem::path& path);
// The same from text in memory (`name` stands in for the path in messages).
TextLines text_lines_from(const std::string& text, const std::string& name);

// A plain decimal number as a log line prints it (what a `[\d.]+` pattern matched: "..5" and "."
// match too): parsed, or a WorkError "<where>: <what> '<text>' is not a number"; negative or
// non-finite values are refused as well.
double parse_decimal(const std::string& text, const std::string& where, const char* what);

// Every log holds one GPU: the first name seen is kept in `current`; a different one later is a
// WorkError("<where>: mismatched GPUs in one file: 'seen' here, 'current' before").
void expect_one_gpu(std::string& current, const std::string& seen, const std::string& where);

}  // namespace ub
