// Reading a large JSON document in one pass with memory that does not grow with it: the file
// (plain or gzip, told by zlib from its first bytes) is read in blocks, and the document is
// walked value by value. A value is handed over as one contiguous span of its bytes (an event of
// a trace: a few hundred bytes) once its end is found; the buffer holding it is reused for the
// next. Spans are parsed with JsonSpan, a small parser that reads only what is asked of it.
//
// This exists for the traces `decompose` reads (torch.profiler's Chrome traces reach GBs); the
// general reader for small files is nlohmann::json (core/json_text.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace ub::trace {

// The bytes of a file, decompressed when it is gzip.
class ByteSource {
 public:
  explicit ByteSource(const std::string& path);
  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;
  // Up to `n` bytes into `out`; 0 at the end. WorkError naming the file on a read error.
  size_t read(char* out, size_t n);
  const std::string& path() const { return path_; }
  uint64_t bytes_read() const { return bytes_; }  // decompressed

 private:
  std::string path_;
  void* file_ = nullptr;  // gzFile
  uint64_t bytes_ = 0;
};

// A parser over the bytes of one JSON value, in memory. Every error is a WorkError with `where`.
class JsonSpan {
 public:
  // `where` names the value in errors; it must outlive the span.
  JsonSpan(std::string_view text, std::string_view where) : p_(text.data()), end_(text.data() + text.size()), where_(where) {}

  // Calls f(key, span) for each member of an object (span: the member's value); false from f
  // stops early.
  void for_each_member(const std::function<bool(std::string_view key, JsonSpan& value)>& f);
  // Calls f(span) for each element of an array.
  void for_each_element(const std::function<bool(JsonSpan& value)>& f);

  std::string string();                   // a string value, unescaped
  std::optional<double> number();         // a number value (or null / another type: nullopt)
  std::optional<int64_t> integer();       // a number with no fraction, or a string of digits
  void skip();                            // any value
  char peek();                            // the first character of the value ('\0' at the end)
  std::string_view where() const { return where_; }

 private:
  void ws();
  [[noreturn]] void fail(const char* what) const;
  void read_string_into(std::string& out);
  const char* p_;
  const char* end_;
  std::string_view where_;
  int depth_ = 0;
};

// Walks a document of the shape {"key": value, ..., "streamed": [v, v, ...], ...} (or a bare
// array [v, v, ...]) from a ByteSource: `on_member` gets every top-level member other than the
// streamed array whole; `on_element` gets each element of the array named `streamed`.
// A value larger than `max_value_bytes` is refused (not a trace this reads).
struct StreamHandlers {
  std::function<void(std::string_view key, JsonSpan& value)> on_member;
  std::function<void(JsonSpan& element)> on_element;
};
void stream_document(ByteSource& source, std::string_view streamed, const StreamHandlers& handlers,
                     size_t block_bytes = size_t{1} << 22, size_t max_value_bytes = size_t{64} << 20);

}  // namespace ub::trace
