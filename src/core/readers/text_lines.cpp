// Reading a text file as lines; see text_lines.hpp.
#include "core/readers/text_lines.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "core/error.hpp"

namespace ub {

std::string TextLines::where(size_t index) const { return fmt::format("{}:{}", path, index + 1); }

TextLines read_text_lines(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) throw UsageError(fmt::format("{}: no such file", path.string()));
  if (std::filesystem::is_directory(path)) throw UsageError(fmt::format("{}: is a directory", path.string()));
  // zlib reads a gzip file decompressed and any other as it is: records kept as .jsonl.gz read
  // like the plain ones.
  const std::unique_ptr<gzFile_s, int (*)(gzFile)> in(gzopen(path.c_str(), "rb"), gzclose);
  if (!in) throw UsageError(fmt::format("{}: cannot be read", path.string()));
  // Read in blocks, the line being read never past its bound (a device such as /dev/zero, or a
  // file that is not text, stops at the first over-long line instead of filling memory).
  std::string text, block(1 << 16, '\0');
  std::error_code ec;
  if (const auto size = std::filesystem::file_size(path, ec); !ec && gzdirect(in.get()) == 1) text.reserve(size);
  size_t line_start = 0;
  for (;;) {
    const int n = gzread(in.get(), block.data(), static_cast<unsigned>(block.size()));
    if (n < 0) {
      int code = 0;
      throw WorkError(fmt::format("{}: cannot be read: {}", path.string(), gzerror(in.get(), &code)));
    }
    const auto got = static_cast<size_t>(n);
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
