// Reading a text file as lines; see text_lines.hpp.
#include "core/readers/text_lines.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "core/error.hpp"

namespace ub {

std::string TextLines::where(size_t index) const { return fmt::format("{}:{}", path, index + 1); }

TextLines read_text_lines(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) throw UsageError(fmt::format("{}: no such file", path.string()));
  if (std::filesystem::is_directory(path)) throw UsageError(fmt::format("{}: is a directory", path.string()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot be read", path.string()));
  // Read in blocks, the line being read never past its bound (a device such as /dev/zero, or a
  // file that is not text, stops at the first over-long line instead of filling memory).
  std::string text, block(1 << 16, '\0');
  size_t line_start = 0;
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const auto got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    const size_t from = text.size();
    text.append(block.data(), got);
    for (size_t nl = text.find('\n', from); nl != std::string::npos; nl = text.find('\n', nl + 1)) line_start = nl + 1;
    if (text.size() - line_start > kMaxLineBytes) {
      const size_t line = static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(line_start), '\n'));
      throw WorkError(fmt::format("{}:{}: a line longer than {} MiB: not a log upgradebench reads", path.string(),
                                  line + 1, kMaxLineBytes >> 20));
    }
  }
  return text_lines_from(text, path.string());
}

double parse_decimal(const std::string& text, const std::string& where, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    throw WorkError(fmt::format("{}: {} '{}' is not a number", where, what, text));
  }
  if (!std::isfinite(v) || v < 0) throw WorkError(fmt::format("{}: {} must be a finite non-negative number", where, what));
  return v;
}

void expect_one_gpu(std::string& current, const std::string& seen, const std::string& where) {
  if (!current.empty() && current != seen) {
    throw WorkError(fmt::format("{}: mismatched GPUs in one file: '{}' here, '{}' before", where, seen, current));
  }
  current = seen;
}

TextLines text_lines_from(const std::string& text, const std::string& name) {
  TextLines t;
  t.path = name;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if ((end == std::string::npos ? text.size() : end) - start > kMaxLineBytes) {
      throw WorkError(fmt::format("{}:{}: a line longer than {} MiB: not a log upgradebench reads", name,
                                  t.lines.size() + 1, kMaxLineBytes >> 20));
    }
    if (end == std::string::npos) {
      t.lines.push_back(text.substr(start));
      t.last_line_unterminated = true;
      break;
    }
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    t.lines.push_back(std::move(line));
    start = end + 1;
  }
  return t;
}

}  // namespace ub
