// Reading a large JSON document in one pass with memory that does not grow with it: the file
// (plain or gzip, told from its first bytes) is read in blocks, and the document is
// walked value by value. A value is handed over as one contiguous span of its bytes (an event of
// a trace: a few hundred bytes) once its end is found; the buffer holding it is reused for the
// next. Spans are parsed with JsonSpan, a small parser that reads only what is asked of it.
//
// This exists for the traces `decompose` reads (torch.profiler's Chrome traces reach GBs); the
// general reader for small files is nlohmann::json (base/json_text.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/error.hpp"

namespace ub {
class GzipReader;
}

namespace ub::trace {

// The bytes of a file, decompressed when it is gzip: then on a thread of its own, a few blocks
// ahead of the reader, so that parsing and decompression overlap (a trace is read at the speed of
// the slower of the two, not of their sum).
class ByteSource {
 public:
  explicit ByteSource(const std::string& path);
  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;
  // Up to `n` bytes into `out`; 0 at the end. WorkError naming the file on a read error. A UTF-8
  // byte-order mark at the start of the file is not part of what it holds: it is skipped.
  size_t read(char* out, size_t n);
  const std::string& path() const { return path_; }
  uint64_t bytes_read() const { return bytes_; }  // decompressed
  // All the bytes there are to read, where that is known before reading (a plain file: its size
  // when opened); 0 for a gzip file, whose decompressed size is not known ahead.
  uint64_t known_size() const { return known_size_; }

 private:
  size_t read_file(char* out, size_t n);  // from the file, on whichever thread reads it
  size_t read_bytes(char* out, size_t n);  // the decompressed bytes, byte-order mark and all

  struct ReadAhead;
  std::string path_;
  std::unique_ptr<GzipReader> file_;
  uint64_t bytes_ = 0;
  uint64_t known_size_ = 0;
  std::unique_ptr<ReadAhead> ahead_;  // gzip only
  bool started_ = false;  // the first bytes looked at for a byte-order mark
  std::string head_;      // the first bytes, read ahead to look, not yet handed out
};

// A parser over the bytes of JSON values in memory, reading only what is asked of it: members and
// elements are visited (a visitor that does not read a value leaves it to be skipped), strings
// are handed out as views where they hold no escape. Errors are WorkErrors naming `where`. When
// the bytes may stop short of the value's end (`complete` false: a window of a streamed file),
// running out throws Truncated instead, so the caller can read more and parse again.
class JsonSpan {
 public:
  struct Truncated {};
  // A value that is not what was asked for (a string where a number is, a number out of range):
  // the message names where the span is; `what_alone` is the same without it, for a caller that
  // names the place better (the streamed array's element).
  struct BadValue : WorkError {
    BadValue(const std::string& message, std::string what) : WorkError(message), what_alone(std::move(what)) {}
    std::string what_alone;
  };

  JsonSpan(std::string_view text, std::string_view where, bool complete = true)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), where_(where), complete_(complete) {}

  // f(std::string_view key, JsonSpan& value) -> bool for each member of an object; false stops
  // the visits (the rest is skipped).
  template <class F>
  void for_each_member(F&& f);
  // f(JsonSpan& value) -> bool for each element of an array.
  template <class F>
  void for_each_element(F&& f);

  std::string string();                                  // a string value, unescaped
  void string_into(std::string& out);                    // the same into `out` (replacing it)
  std::string_view string_view(std::string& scratch);    // a view of it (into `scratch` if escaped)
  // A number as JSON writes it (another value: skipped, nullopt); what JSON has no number for
  // (a leading zero, a leading or trailing point, inf, nan) is a malformed document.
  std::optional<double> number();
  std::optional<int64_t> integer();                      // a number with no fraction (another value: skipped, nullopt)
  void skip();                                           // any value
  char peek();                                           // the next character ('\0' at the end)
  size_t consumed() const { return static_cast<size_t>(p_ - begin_); }
  std::string_view where() const { return where_; }

 private:
  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  [[noreturn]] void fail(const char* what) const;
  [[noreturn]] void ran_out() const;
  void enter(char open);     // expects `open`, counts the depth
  bool close_or_next(char close);  // after a value: true at `close` (consumed), false after ','
  void key_into(std::string_view& key, std::string& scratch);
  void decode_string(std::string& out);  // at the opening quote; appends
  void refuse_raw_control(const char* from, const char* to) const;

  const char* begin_;
  const char* p_;
  const char* end_;
  std::string_view where_;
  bool complete_;
  int depth_ = 0;
};

template <class F>
void JsonSpan::for_each_member(F&& f) {
  enter('{');
  if (peek() == '}') {
    ++p_;
    --depth_;
    return;
  }
  std::string scratch;
  bool go_on = true;
  while (true) {
    std::string_view key;
    key_into(key, scratch);
    ws();
    const char* at = p_;
    JsonSpan value = *this;
    if (go_on) go_on = f(key, value);
    if (value.p_ == at) skip();
    else p_ = value.p_;
    if (close_or_next('}')) return;
  }
}

template <class F>
void JsonSpan::for_each_element(F&& f) {
  enter('[');
  if (peek() == ']') {
    ++p_;
    --depth_;
    return;
  }
  bool go_on = true;
  while (true) {
    ws();
    const char* at = p_;
    JsonSpan value = *this;
    if (go_on) go_on = f(value);
    if (value.p_ == at) skip();
    else p_ = value.p_;
    if (close_or_next(']')) return;
  }
}

// Walks a document of the shape {"key": value, ..., "streamed": [v, v, ...], ...} (or a bare
// array [v, v, ...]) from a ByteSource: `on_member` gets every top-level member other than the
// streamed array whole; `on_element` gets each element of the array named `streamed`.
// A value larger than `max_value_bytes` is refused (not a trace this reads).
// `on_element` may be called again for the same element when its bytes straddled the window (it
// throws JsonSpan::Truncated from the first attempt): it must not act before the element is read.
struct StreamHandlers {
  std::function<void(std::string_view key, JsonSpan& value)> on_member;
  std::function<void(JsonSpan& element)> on_element;
};
void stream_document(ByteSource& source, std::string_view streamed, const StreamHandlers& handlers,
                     size_t block_bytes = size_t{1} << 22, size_t max_value_bytes = size_t{64} << 20);

}  // namespace ub::trace
