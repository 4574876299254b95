// One-pass JSON for large documents; see json_stream.hpp.
#include "base/json_stream.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "base/gzip_reader.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"

namespace ub::trace {

namespace {

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_delimiter(char c) { return is_ws(c) || c == ',' || c == ']' || c == '}' || c == ':'; }

constexpr size_t npos = static_cast<size_t>(-1);

// The index one past the closing quote of the string whose opening quote is b[i], or npos.
size_t string_end(const char* b, size_t i, size_t n) {
  const char* q = b + i + 1;
  const char* const e = b + n;
  while (q < e) {
    q = static_cast<const char*>(std::memchr(q, '"', static_cast<size_t>(e - q)));
    if (!q) return npos;
    size_t backslashes = 0;
    while (q - 1 - backslashes > b + i && q[-1 - static_cast<std::ptrdiff_t>(backslashes)] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return static_cast<size_t>(q - b) + 1;
    ++q;
  }
  return npos;
}

// The index one past the end of the value starting at b[i], or npos when b[0, n) holds only its
// beginning (`eof`: nothing more will come, so a scalar ends at n).
size_t value_end(const char* b, size_t i, size_t n, bool eof) {
  const char c = b[i];
  if (c == '"') return string_end(b, i, n);
  if (c == '{' || c == '[') {
    size_t depth = 0;
    for (size_t j = i; j < n; ++j) {
      const char ch = b[j];
      if (ch == '"') {
        const size_t e = string_end(b, j, n);
        if (e == npos) return npos;
        j = e - 1;
      } else if (ch == '{' || ch == '[') {
        ++depth;
      } else if (ch == '}' || ch == ']') {
        if (--depth == 0) return j + 1;
      }
    }
    return npos;
  }
  size_t j = i;
  while (j < n && !is_delimiter(b[j])) ++j;
  return j == n && !eof ? npos : j;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

// ---- ByteSource ----

// Decompressed blocks, filled by a thread of their own and taken by the reader in order.
struct ByteSource::ReadAhead {
  static constexpr size_t kBlock = 1 << 20, kBlocks = 4;  // 4 MiB decompressed ahead at most
  std::mutex m;
  std::condition_variable changed;
  std::deque<std::vector<char>> full;
  bool done = false, stop = false;
  std::exception_ptr error;
  std::vector<char> current;
  size_t pos = 0;
  std::thread thread;
};

ByteSource::ByteSource(const std::string& path) : path_(path) {
  // Compressed input is read this much at a time: no more than the file needs.
  struct stat st {};
  const uint64_t on_disk = ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
  constexpr uint64_t kMinBuffer = 8 << 10, kMaxBuffer = 1 << 18;
  file_ = std::make_unique<GzipReader>(path, path, on_disk ? std::clamp(on_disk, kMinBuffer, kMaxBuffer) : kMaxBuffer);
  if (file_->direct()) {  // plain: read where it is asked
    known_size_ = on_disk;
    return;
  }
  ahead_ = std::make_unique<ReadAhead>();
  ahead_->thread = std::thread([this] {
    ReadAhead& a = *ahead_;
    try {
      for (;;) {
        {
          std::unique_lock lock(a.m);
          a.changed.wait(lock, [&] { return a.stop || a.full.size() < ReadAhead::kBlocks; });
          if (a.stop) return;
        }
        std::vector<char> block(ReadAhead::kBlock);
        block.resize(read_file(block.data(), block.size()));
        std::lock_guard lock(a.m);
        if (block.empty()) a.done = true;
        else a.full.push_back(std::move(block));
        a.changed.notify_all();
        if (a.done) return;
      }
    } catch (...) {
      std::lock_guard lock(a.m);
      a.error = std::current_exception();
      a.done = true;
      a.changed.notify_all();
    }
  });
}

ByteSource::~ByteSource() {
  if (ahead_) {
    {
      std::lock_guard lock(ahead_->m);
      ahead_->stop = true;
    }
    ahead_->changed.notify_all();
    ahead_->thread.join();
  }
}

size_t ByteSource::read_file(char* out, size_t n) { return file_->read(out, n); }

size_t ByteSource::read(char* out, size_t n) {
  if (!started_) {
    started_ = true;
    char first[3];
    size_t got = 0;
    while (got < 3) {
      const size_t k = read_bytes(first + got, 3 - got);
      if (k == 0) break;
      got += k;
    }
    head_.assign(first, got);
    if (head_ == "\xEF\xBB\xBF") head_.clear();
  }
  if (!head_.empty()) {
    const size_t k = std::min(n, head_.size());
    std::memcpy(out, head_.data(), k);
    head_.erase(0, k);
    return k;
  }
  return read_bytes(out, n);
}

size_t ByteSource::read_bytes(char* out, size_t n) {
  if (!ahead_) {
    const size_t got = read_file(out, n);
    bytes_ += got;
    return got;
  }
  ReadAhead& a = *ahead_;
  if (a.pos == a.current.size()) {
    std::unique_lock lock(a.m);
    a.changed.wait(lock, [&] { return !a.full.empty() || a.done; });
    if (a.full.empty()) {
      if (a.error) std::rethrow_exception(a.error);
      return 0;
    }
    a.current = std::move(a.full.front());
    a.full.pop_front();
    a.pos = 0;
    a.changed.notify_all();
  }
  const size_t got = std::min(n, a.current.size() - a.pos);
  std::memcpy(out, a.current.data() + a.pos, got);
  a.pos += got;
  bytes_ += got;
  return got;
}

// ---- JsonSpan ----

void JsonSpan::fail(const char* what) const { throw BadValue(fmt::format("{}: {}", where_, what), what); }

void JsonSpan::ran_out() const {
  if (!complete_) throw Truncated{};
  fail("the value ends early");
}

char JsonSpan::peek() {
  ws();
  if (p_ < end_) return *p_;
  if (!complete_) throw Truncated{};
  return '\0';
}

void JsonSpan::enter(char open) {
  if (peek() != open) fail(open == '{' ? "an object was expected" : "an array was expected");
  if (++depth_ > static_cast<int>(kMaxJsonDepth)) fail("nested too deep");
  ++p_;
}

bool JsonSpan::close_or_next(char close) {
  const char c = peek();
  ++p_;
  if (c == close) {
    --depth_;
    return true;
  }
  if (c != ',') fail(close == '}' ? "',' or '}' was expected in an object" : "',' or ']' was expected in an array");
  return false;
}

void JsonSpan::key_into(std::string_view& key, std::string& scratch) {
  if (peek() == '}') fail("a key was expected after ',' (JSON has no comma before '}')");
  if (peek() != '"') fail("a key (a string) was expected");
  key = string_view(scratch);
  if (peek() != ':') fail("':' was expected after a key");
  ++p_;
}

// JSON has no raw control character inside a string (a NUL, an escape, a newline are written
// \u0000, \u001b, \n): one there is a damaged file, and a NUL would end the name where a C
// string is made of it.
void JsonSpan::refuse_raw_control(const char* from, const char* to) const {
  for (const char* c = from; c < to; ++c) {
    if (static_cast<unsigned char>(*c) < 0x20) {
      fail(fmt::format("a raw control character (\\x{:02x}) inside a string: not JSON text", static_cast<unsigned char>(*c)).c_str());
    }
  }
}

std::string_view JsonSpan::string_view(std::string& scratch) {
  if (peek() != '"') fail("a string was expected");
  const char* start = p_ + 1;
  // Keys and short values end within a few bytes: a plain loop; long ones (kernel names) by memchr.
  const char* q = start;
  const char* const near_end = std::min(end_, start + 24);
  while (q < near_end && *q != '"' && *q != '\\') ++q;
  if (q == near_end && q < end_) {
    q = static_cast<const char*>(std::memchr(q, '"', static_cast<size_t>(end_ - q)));
    if (!q) ran_out();
    if (std::memchr(start, '\\', static_cast<size_t>(q - start))) q = start - 1;  // escaped: decode below
  } else if (q == end_) {
    ran_out();
  }
  if (q >= start && *q == '"') {
    refuse_raw_control(start, q);
    p_ = q + 1;
    return {start, static_cast<size_t>(q - start)};
  }
  // A backslash in it: decode (rare in traces).
  scratch.clear();
  decode_string(scratch);
  return scratch;
}

void JsonSpan::decode_string(std::string& out) {
  ++p_;  // the opening quote
  const char* run = p_;
  while (true) {
    if (p_ >= end_) ran_out();
    const char c = *p_;
    if (c == '"') {
      out.append(run, static_cast<size_t>(p_ - run));
      ++p_;
      return;
    }
    if (c != '\\') {
      if (static_cast<unsigned char>(c) < 0x20) refuse_raw_control(p_, p_ + 1);
      ++p_;
      continue;
    }
    out.append(run, static_cast<size_t>(p_ - run));
    if (p_ + 1 >= end_) ran_out();
    const char e = p_[1];
    p_ += 2;
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        auto hex4 = [&]() -> uint32_t {
          if (end_ - p_ < 4) ran_out();
          uint32_t v = 0;
          const auto r = std::from_chars(p_, p_ + 4, v, 16);
          if (r.ptr != p_ + 4) fail("a \\u escape is not hexadecimal");
          p_ += 4;
          return v;
        };
        uint32_t cp = hex4();
        if (cp >= 0xD800 && cp < 0xDC00 && end_ - p_ >= 6 && p_[0] == '\\' && p_[1] == 'u') {
          p_ += 2;
          const uint32_t low = hex4();
          cp = (low >= 0xDC00 && low < 0xE000) ? 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00) : 0xFFFD;
        } else if (cp >= 0xD800 && cp < 0xE000) {
          cp = 0xFFFD;
        }
        append_utf8(out, cp);
        break;
      }
      default: fail("an unknown escape in a string");
    }
    run = p_;
  }
}

void JsonSpan::string_into(std::string& out) {
  std::string scratch;
  const std::string_view v = string_view(scratch);
  if (v.data() == scratch.data() && !scratch.empty()) out.swap(scratch);
  else out.assign(v.data(), v.size());
}

std::string JsonSpan::string() {
  std::string out;
  string_into(out);
  return out;
}

namespace {

// The length of a number as JSON writes it at the start of [b, e): -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?;
// 0 where none starts there.
size_t json_number_length(const char* b, const char* e) {
  const char* p = b;
  const auto digits = [&] {
    const char* from = p;
    while (p < e && *p >= '0' && *p <= '9') ++p;
    return p - from;
  };
  if (p < e && *p == '-') ++p;
  if (p < e && *p == '0') {
    ++p;
  } else if (digits() == 0) {
    return 0;
  }
  if (p < e && *p == '.') {
    ++p;
    if (digits() == 0) return 0;
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < e && (*p == '+' || *p == '-')) ++p;
    if (digits() == 0) return 0;
  }
  return static_cast<size_t>(p - b);
}

}  // namespace

std::optional<double> JsonSpan::number() {
  const char c = peek();
  if (c != '-' && (c < '0' || c > '9')) {
    skip();
    return std::nullopt;
  }
  const size_t n = json_number_length(p_, end_);
  // More of the number may follow in the file where its characters run to the end of the span.
  const char* q = p_ + n;
  while (q < end_ && std::strchr("0123456789+-.eE", *q) != nullptr && *q != '\0') ++q;
  if (q == end_ && !complete_) throw Truncated{};
  // What follows a number is a delimiter; a digit after a leading zero, a letter (-inf), a point
  // without digits are not JSON.
  const char after = p_ + n < end_ ? p_[n] : ' ';
  if (n == 0 || (after >= '0' && after <= '9') || std::isalpha(static_cast<unsigned char>(after)) || after == '.') {
    fail("a malformed number (JSON writes no leading zero, bare point, inf or nan)");
  }
  double v = 0;
  const auto r = std::from_chars(p_, p_ + n, v);
  if (r.ec != std::errc() || r.ptr != p_ + n) fail("a number out of range");
  p_ += n;
  return v;
}

std::optional<int64_t> JsonSpan::integer() {
  const std::optional<double> d = number();
  if (!d || !(std::fabs(*d) < 9e15) || *d != static_cast<double>(static_cast<int64_t>(*d))) return std::nullopt;
  return static_cast<int64_t>(*d);
}

void JsonSpan::skip() {
  if (peek() == '\0') fail("a value was expected");
  const size_t e = value_end(p_, 0, static_cast<size_t>(end_ - p_), complete_);
  if (e == npos) ran_out();
  if (e == 0) fail("a value was expected");
  // A value passed over unread is still JSON text: a raw control byte in it (a NUL, an escape;
  // JSON writes them \u0000) is a damaged file, as it is in a value that is read.
  for (const char* c = p_; c < p_ + e; ++c) {
    const auto u = static_cast<unsigned char>(*c);
    if (u < 0x20 && u != '\t' && u != '\n' && u != '\r') {
      fail(fmt::format("a raw control character (\\x{:02x}) in a value: not JSON text", u).c_str());
    }
  }
  p_ += e;
}

// ---- stream_document ----

namespace {

// The window of the file being read: bytes [pos, end) of `buf` are unread.
class Window {
 public:
  Window(ByteSource& src, size_t block, size_t max_value)
      : src_(src), buf_(std::make_unique_for_overwrite<char[]>(block)), size_(block), max_value_(max_value) {}

  // The next character that is not white space, reading more as needed; '\0' at the end.
  char next() {
    while (true) {
      while (pos_ < end_ && is_ws(buf_[pos_])) ++pos_;
      if (pos_ < end_) return buf_[pos_];
      if (!fill()) return '\0';
    }
  }
  void advance() { ++pos_; }

  // The value starting at the next character, whole in memory.
  std::string_view value() {
    if (next() == '\0') fail("the document ends where a value was expected");
    while (true) {
      const size_t e = value_end(buf_.get(), pos_, end_, eof_);
      if (e != npos) {
        const std::string_view v(buf_.get() + pos_, e - pos_);
        pos_ = e;
        return v;
      }
      if (eof_) fail("the document ends inside a value");
      if (end_ - pos_ >= max_value_) {
        fail(fmt::format("a value larger than {} MiB: not a trace this reads", max_value_ >> 20).c_str());
      }
      fill();
    }
  }

  const std::string& path() const { return src_.path(); }
  ByteSource& source() { return src_; }
  // The unread bytes, from the next value on; whether the file has no more.
  std::string_view rest() {
    next();
    return {buf_.get() + pos_, end_ - pos_};
  }
  bool at_end() const { return eof_; }
  // Right after next(): whether every byte was read (next() also answers '\0' at a NUL byte).
  bool drained() const { return pos_ >= end_; }
  void consume(size_t n) { pos_ += n; }
  // Reads more behind what is unread (a value straddles the window's end).
  void more() {
    if (eof_) fail("the document ends inside a value");
    if (end_ - pos_ >= max_value_) {
      fail(fmt::format("a value larger than {} MiB: not a trace this reads", max_value_ >> 20).c_str());
    }
    fill();
  }
  [[noreturn]] void fail(const char* what) const {
    throw WorkError(fmt::format("{}: {} (at byte {})", src_.path(), what, src_.bytes_read() - (end_ - pos_)));
  }

 private:
  // Moves the unread bytes to the front and reads more behind them (growing the buffer when a
  // value fills it). False at the end of the file.
  bool fill() {
    if (eof_) return false;
    if (pos_ > 0) {
      std::memmove(buf_.get(), buf_.get() + pos_, end_ - pos_);
      end_ -= pos_;
      pos_ = 0;
    }
    if (end_ == size_) {
      const size_t grown = std::min(size_ * 2, max_value_ + 1);
      auto bigger = std::make_unique_for_overwrite<char[]>(grown);
      std::memcpy(bigger.get(), buf_.get(), end_);
      buf_ = std::move(bigger);
      size_ = grown;
    }
    const size_t got = src_.read(buf_.get() + end_, size_ - end_);
    if (got == 0) {
      eof_ = true;
      return false;
    }
    end_ += got;
    return true;
  }

  ByteSource& src_;
  // Left uninitialised: only what is read is touched (a trace of a few kB does not clear a 4 MiB block).
  std::unique_ptr<char[]> buf_;
  size_t size_;
  size_t max_value_;
  size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
};

// `name`: the streamed array's key ("" for a document that is one array), for messages.
void stream_array(Window& w, const StreamHandlers& h, std::string_view name, size_t& index) {
  w.advance();  // '['
  if (w.next() == ']') {
    w.advance();
    return;
  }
  while (true) {
    // The element is parsed where it lies; if the window ends inside it, more is read and it is
    // parsed again (once per window at most).
    while (true) {
      JsonSpan span(w.rest(), w.path(), w.at_end());
      try {
        if (h.on_element) h.on_element(span);
        else span.skip();
        if (span.consumed() == 0) span.skip();
        w.consume(span.consumed());
        break;
      } catch (const JsonSpan::Truncated&) {
        w.more();
      } catch (const JsonSpan::BadValue& e) {  // which element, not only which file
        throw WorkError(fmt::format("{}: {}[{}]: {}", w.path(), name.empty() ? "element" : name, index, e.what_alone));
      }
    }
    ++index;
    const char c = w.next();
    w.advance();
    if (c == ']') return;
    if (c != ',') w.fail("',' or ']' was expected in the streamed array");
    if (w.next() == ']') {
      throw WorkError(fmt::format("{}: {}[{}]: an element was expected after ',' (JSON has no comma before ']')", w.path(),
                                  name.empty() ? "element" : name, index));
    }
  }
}

void stream_object(Window& w, std::string_view streamed, const StreamHandlers& handlers, size_t& index);

}  // namespace

void stream_document(ByteSource& source, std::string_view streamed, const StreamHandlers& handlers, size_t block_bytes,
                     size_t max_value_bytes) {
  // A file known to be smaller than a block is read into a window of its size, one byte over so
  // that its end is seen without growing the window.
  const uint64_t known = source.known_size();
  Window w(source, known ? static_cast<size_t>(std::min<uint64_t>(block_bytes, known + 1)) : block_bytes, max_value_bytes);
  size_t index = 0;
  const char first = w.next();
  if (first != '[' && first != '{') {
    w.fail(first == '\0' && w.drained() ? "empty: not a JSON document" : "not a JSON object or array");
  }
  if (first == '[') stream_array(w, handlers, "", index);
  else stream_object(w, streamed, handlers, index);
  // The file is read to its end: what follows the document (another one appended, bytes after a
  // gzip stream, a NUL byte and more) would otherwise go unread without a word.
  if (w.next() != '\0' || !w.drained()) w.fail("more after the end of the JSON document (two files in one?)");
}

namespace {

void stream_object(Window& w, std::string_view streamed, const StreamHandlers& handlers, size_t& index) {
  ByteSource& source = w.source();
  w.advance();
  if (w.next() == '}') {
    w.advance();
    return;
  }
  std::set<std::string> keys;  // the top level's: one given twice is two documents' worth of one member
  while (true) {
    const std::string_view key_text = w.value();
    JsonSpan key_span(key_text, source.path());
    const std::string key = key_span.string();
    if (!keys.insert(key).second) {
      throw WorkError(fmt::format("{}: the key \"{}\" is given twice at the top level: which value is meant is not known",
                                  source.path(), printable(key)));
    }
    if (w.next() != ':') w.fail("':' was expected after a key");
    w.advance();
    if (key == streamed && w.next() == '[') {
      stream_array(w, handlers, streamed, index);
    } else {
      const std::string_view v = w.value();
      const std::string where = fmt::format("{}: \"{}\"", source.path(), key);
      JsonSpan span(v, where);
      if (handlers.on_member) handlers.on_member(key, span);
    }
    const char c = w.next();
    w.advance();
    if (c == '}') return;
    if (c != ',') w.fail("',' or '}' was expected at the top level");
  }
}

}  // namespace

}  // namespace ub::trace
