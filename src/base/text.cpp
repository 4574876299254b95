// String helpers; see text.hpp.
#include "base/text.hpp"

#include <fmt/format.h>

#include <cmath>

#include <algorithm>
#include <cctype>
#include <numeric>

namespace ub {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) end = s.size();
    std::string piece = trim(s.substr(start, end - start));
    if (!piece.empty()) out.push_back(std::move(piece));
    start = end + 1;
  }
  return out;
}

size_t edit_distance(std::string_view a_in, std::string_view b_in) {
  const std::string a = to_lower(a_in), b = to_lower(b_in);
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest(std::string_view name, const std::vector<std::string>& candidates,
                                 size_t count) {
  std::vector<std::pair<size_t, std::string>> scored;
  scored.reserve(candidates.size());
  for (const auto& c : candidates) scored.emplace_back(edit_distance(name, c), c);
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && out.size() < count; ++i) {
    if (std::find(out.begin(), out.end(), scored[i].second) == out.end()) {
      out.push_back(scored[i].second);
    }
  }
  return out;
}

std::string binary_size_text(int64_t bytes) {
  for (const auto& [shift, unit] : {std::pair{30, 'G'}, std::pair{20, 'M'}, std::pair{10, 'K'}}) {
    const int64_t one = int64_t{1} << shift;
    if (bytes >= one && bytes % one == 0) return std::to_string(bytes >> shift) + unit;
  }
  return std::to_string(bytes);
}

namespace {
size_t utf8_length(std::string_view s, size_t i);
}  // namespace

std::string escape_control(std::string_view s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  const auto byte = [&](size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  for (size_t i = 0; i < s.size(); ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    const bool c1 = u == 0xc2 && byte(i + 1) >= 0x80 && byte(i + 1) <= 0x9f;  // U+0080-U+009F in UTF-8
    // Marks that reorder, break or hide what a terminal shows, so a name could show other text than
    // it holds: the bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069), the zero-
    // width space, joiners and LRM / RLM (U+200B-U+200F), the word joiner and invisible operators
    // (U+2060-U+2064), the line and paragraph separators (U+2028, U+2029), the zero-width no-break
    // space (U+FEFF), and the Arabic letter mark (U+061C, two bytes).
    const unsigned b1 = byte(i + 1), b2 = byte(i + 2);
    const size_t mark = (u == 0xe2 && ((b1 == 0x80 && ((b2 >= 0xaa && b2 <= 0xae) || (b2 >= 0x8b && b2 <= 0x8f) ||
                                                       b2 == 0xa8 || b2 == 0xa9)) ||
                                       (b1 == 0x81 && ((b2 >= 0xa6 && b2 <= 0xa9) || (b2 >= 0xa0 && b2 <= 0xa4))))) ||
                                (u == 0xef && b1 == 0xbb && b2 == 0xbf)
                            ? 3
                        : u == 0xd8 && b1 == 0x9c ? 2
                                                  : 0;
    if (keep_newlines && s[i] == '\n') {
      out += s[i];
    } else if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else if (c1) {
      out += fmt::format("\\xc2\\x{:02x}", byte(++i));
    } else if (mark > 0) {
      for (size_t j = 0; j < mark; ++j) out += fmt::format("\\x{:02x}", byte(i + j));
      i += mark - 1;
    } else if (u >= 0x80) {
      // A byte of no valid UTF-8 sequence is shown as its value, not written raw to the terminal.
      const size_t n = utf8_length(s, i);
      if (n == 0) {
        out += fmt::format("\\x{:02x}", u);
      } else {
        out.append(s.substr(i, n));
        i += n - 1;
      }
    } else {
      out += s[i];
    }
  }
  return out;
}

namespace {

// The length of the valid UTF-8 sequence at s[i], 0 when the byte there starts none.
size_t utf8_length(std::string_view s, size_t i) {
  const auto at = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  const unsigned b = at(0);
  const auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) { return at(k) >= lo && at(k) <= hi; };
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) return cont(1) ? 2 : 0;
  if (b == 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if ((b >= 0xe1 && b <= 0xec) || b == 0xee || b == 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (b == 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;  // not the UTF-16 surrogates
  if (b == 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (b >= 0xf1 && b <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (b == 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

}  // namespace

bool replace_invalid_utf8(std::string& s) {
  if (std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) return false;
  std::string out;
  out.reserve(s.size() + 8);
  bool replaced = false;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";
      replaced = true;
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  if (replaced) s = std::move(out);
  return replaced;
}

std::string printable(std::string_view s, bool keep_newlines) { return escape_control(s, keep_newlines); }

std::string fixed_decimals(double v, int precision) {
  if (v != 0 && std::isfinite(v) && std::abs(v) < std::pow(10.0, 1 - precision)) return fmt::format("{:.2g}", v);
  return fmt::format("{:.{}f}", v, precision);
}

std::string span_text(const std::string& a, const std::string& b) { return a == b ? a : a + "-" + b; }

std::string ascii_printable(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) out += c;
    else out += fmt::format("\\x{:02x}", u);
  }
  return out;
}

std::string name_in_quotes(std::string_view s) { return "'" + printable(s) + "'"; }

std::string fnv1a_hex(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

}  // namespace ub
