// A cursor over one line of a peer's printout, for the fixed formats the readers match
// (mamf-finder.py's shape, footer and header lines, bench_decompose.py's bucket lines).
// Each step matches at the cursor and moves past what it matched, or fails; a format is a chain of
// steps joined by &&. It takes the place of std::regex there: nothing backtracks or recurses, so a
// line of any length is matched in time linear in it and in constant stack.
#pragma once

#include <cctype>
#include <initializer_list>
#include <string_view>

namespace ub {

class TextCursor {
 public:
  explicit TextCursor(std::string_view text) : s_(text) {}

  // White space, none or more (always true).
  bool skip_space() {
    while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
    return true;
  }
  // White space, at least one character of it.
  bool space() {
    const size_t from = pos_;
    skip_space();
    return pos_ > from;
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  // The first of `words` that is at the cursor.
  bool one_of(std::initializer_list<std::string_view> words, std::string_view& out) {
    for (std::string_view w : words) {
      if (literal(w)) {
        out = w;
        return true;
      }
    }
    return false;
  }
  // One or more decimal digits.
  bool digits(std::string_view& out) {
    return run([](char c) { return c >= '0' && c <= '9'; }, out);
  }
  // One or more digits and points ("989.4", and "1..2" too: the number's reader refuses that).
  bool decimal(std::string_view& out) {
    return run([](char c) { return (c >= '0' && c <= '9') || c == '.'; }, out);
  }
  // A name: a letter or '_', then letters, digits, '_', '.' and '-'.
  bool name(std::string_view& out) {
    if (pos_ >= s_.size() || !(std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) return false;
    return run([](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; },
               out);
  }
  bool at_end() const { return pos_ == s_.size(); }
  std::string_view rest() const { return s_.substr(pos_); }

  static bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

 private:
  template <class Pred>
  bool run(Pred in, std::string_view& out) {
    size_t end = pos_;
    while (end < s_.size() && in(s_[end])) ++end;
    if (end == pos_) return false;
    out = s_.substr(pos_, end - pos_);
    pos_ = end;
    return true;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace ub
