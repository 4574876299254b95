// Reading a text file a line at a time; see line_source.hpp.
#include "base/line_source.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <utility>

#include "base/error.hpp"
#include "base/gzip_reader.hpp"
#include "base/text.hpp"

namespace ub {

namespace {

// The most a pipe is read: a log, a records file or a collective sweep is megabytes; a pipe that
// goes on past this (`yes`, a generator of valid-looking records) is refused rather than read for
// ever. A file has an end and is read whole.
constexpr uint64_t kMaxPipeBytes = uint64_t{256} << 20;

// What some editors put at the start of a UTF-8 file: not part of its first line.
constexpr std::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";

// The first line that long is a file of another kind (a usage error, exit 2, as any file of a kind
// a command does not read); a later one is a log damaged there.
[[noreturn]] void too_long(const std::string& name, size_t index) {
  const std::string what = fmt::format("{}:{}: a line longer than {} MiB: not a log upgradebench reads", name, index + 1,
                                       kMaxLineBytes >> 20);
  if (index == 0) throw UsageError(what);
  throw WorkError(what);
}

// Splits a stream of blocks into lines for `each`. A line inside one block is handed out where it
// lies; one that spans blocks is gathered in `pending_`, never past kMaxLineBytes.
class LineSplitter {
 public:
  LineSplitter(const std::string& name, std::function<bool(const Line&)> each) : name_(name), each_(std::move(each)) {}

  // false once `each` asked to stop.
  bool feed(std::string_view block) {
    while (!block.empty()) {
      const size_t nl = block.find('\n');
      if (nl == std::string_view::npos) {
        if (pending_.size() + block.size() > kMaxLineBytes) too_long(name_, index_);
        pending_.append(block);
        return true;
      }
      std::string_view line = block.substr(0, nl);
      block.remove_prefix(nl + 1);
      if (!pending_.empty()) {
        if (pending_.size() + line.size() > kMaxLineBytes) too_long(name_, index_);
        pending_.append(line);
        line = pending_;
      } else if (line.size() > kMaxLineBytes) {
        too_long(name_, index_);
      }
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (index_ == 0 && line.substr(0, kUtf8ByteOrderMark.size()) == kUtf8ByteOrderMark) {
        line.remove_prefix(kUtf8ByteOrderMark.size());
      }
      const bool go_on = each_(Line{line, index_++, false});
      pending_.clear();
      if (!go_on) return false;
    }
    return true;
  }
  void finish() {
    std::string_view line = pending_;
    if (index_ == 0 && line.substr(0, kUtf8ByteOrderMark.size()) == kUtf8ByteOrderMark) {
      line.remove_prefix(kUtf8ByteOrderMark.size());
    }
    if (!line.empty()) each_(Line{line, index_, true});
  }

 private:
  const std::string& name_;
  std::function<bool(const Line&)> each_;
  std::string pending_;
  size_t index_ = 0;
};

// A pass that holds the lines: each line it is handed goes to `held`, and whether the last was cut short.
std::function<bool(const Line&)> collector(HeldLines& held) {
  return [&held](const Line& l) {
    held.lines.emplace_back(l.text);
    held.cut_short = l.cut_short;
    return true;
  };
}

// One pass over a file (gzip read decompressed, anything else as it is).
void scan_file(const std::filesystem::path& file, const std::string& name, const std::function<bool(const Line&)>& each) {
  GzipReader in(file.string(), name);
  std::string block(size_t{1} << 16, '\0');
  LineSplitter split(name, each);
  while (const size_t n = in.read(block.data(), block.size())) {
    if (!split.feed(std::string_view(block.data(), n))) return;
  }
  split.finish();
}

}  // namespace

// A pipe read a line at a time, once: what was read stays read, so its first lines are kept (up to
// kPipeHeldBytes) for the passes that come back to them, and the rest is handed out as it comes.
struct LineSource::Pipe {
  std::unique_ptr<GzipReader> in;
  std::string buffer;  // bytes read and not yet handed out
  size_t at = 0;       // where the next line starts in `buffer`
  bool eof = false;
  uint64_t read_total = 0;  // bytes read from the pipe (decompressed)
  // The first lines, for later passes: their text end to end and where each ends (a stream of
  // one-character lines costs 4 bytes a line more, not a string each).
  std::string kept_text;
  std::vector<uint32_t> kept_ends;
  bool past_kept = false;  // lines were handed out and not kept: no pass can read them again
  bool kept_last_cut_short = false;
  size_t next_index = 0;

  // The next line read from the pipe, or false at its end.
  bool next(const std::string& name, std::string& line, bool& cut_short) {
    for (;;) {
      const size_t nl = buffer.find('\n', at);
      if (nl != std::string::npos) {
        if (nl - at > kMaxLineBytes) too_long(name, next_index);
        line.assign(buffer, at, nl - at);
        at = nl + 1;
        cut_short = false;
        break;
      }
      if (buffer.size() - at > kMaxLineBytes) too_long(name, next_index);
      if (eof) {
        if (at == buffer.size()) return false;
        line.assign(buffer, at, std::string::npos);
        at = buffer.size();
        cut_short = true;
        break;
      }
      buffer.erase(0, at);
      at = 0;
      const size_t had = buffer.size();
      buffer.resize(had + (size_t{1} << 16));
      const size_t n = in->read(buffer.data() + had, size_t{1} << 16);
      buffer.resize(had + n);
      eof = n == 0;
      if ((read_total += n) > kMaxPipeBytes) {
        throw WorkError(fmt::format("{}: more than {} MiB from a pipe: not a log upgradebench reads; give a file",
                                    name, kMaxPipeBytes >> 20));
      }
    }
    if (next_index == 0 && line.rfind(kUtf8ByteOrderMark, 0) == 0) line.erase(0, kUtf8ByteOrderMark.size());
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }

  void scan(const std::string& name, const std::function<bool(const Line&)>& each) {
    for (size_t i = 0, begin = 0; i < kept_ends.size(); begin = kept_ends[i++]) {
      const std::string_view text(kept_text.data() + begin, kept_ends[i] - begin);
      if (!each(Line{text, i, kept_last_cut_short && i + 1 == kept_ends.size()})) return;
    }
    if (past_kept) {
      throw WorkError(fmt::format("{}: a pipe is read once, and reading it needs its lines again past the first {} MiB "
                                  "kept: give a file instead", name, kPipeHeldBytes >> 20));
    }
    std::string line;
    bool cut_short = false;
    while (next(name, line, cut_short)) {
      const size_t index = next_index++;
      if (!past_kept && kept_text.size() + kept_ends.size() + line.size() + 1 <= kPipeHeldBytes) {
        kept_text += line;
        kept_ends.push_back(static_cast<uint32_t>(kept_text.size()));
        kept_last_cut_short = cut_short;
      } else {
        past_kept = true;
      }
      if (!each(Line{line, index, cut_short})) return;
    }
  }
};

LineSource LineSource::file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw UsageError(fmt::format("{}: no such file", path.string()));
  if (std::filesystem::is_directory(status)) {
    // A suite's folder (its manifest.json beside its parts' files) is read whole by decide only.
    const bool suite = std::filesystem::is_regular_file(path / "manifest.json", ec);
    throw UsageError(fmt::format("{}: a folder, where a file is read: give one of its files{}", path.string(),
                                 suite ? " (a suite's folder, which `upgradebench decide` reads whole: "
                                         "decide OLD_FOLDER NEW_FOLDER; the sweep is its sweep.jsonl)"
                                       : ""));
  }
  LineSource s;
  s.path = path.string();
  s.file_ = path;
  if (!std::filesystem::is_regular_file(status)) {
    // A pipe or a device is read once, a line at a time as the passes go (Pipe).
    s.pipe_ = std::make_shared<Pipe>();
    s.pipe_->in = std::make_unique<GzipReader>(s.path, s.path);
  } else if (FILE* f = std::fopen(path.c_str(), "rb")) {
    std::fclose(f);
  } else {
    throw UsageError(fmt::format("{}: cannot be read: {}", s.path, std::strerror(errno)));
  }
  return s;
}

LineSource LineSource::text(std::string_view text, const std::string& name) {
  HeldLines held;
  LineSplitter split(name, collector(held));
  split.feed(text);
  split.finish();
  return LineSource::lines(std::move(held.lines), held.cut_short, name);
}

LineSource LineSource::lines(std::vector<std::string> lines, bool cut_short, const std::string& name) {
  LineSource s;
  s.path = name;
  s.held_ = std::make_shared<const std::vector<std::string>>(std::move(lines));
  s.held_cut_short_ = cut_short;
  return s;
}

LineSource LineSource::view(const std::vector<std::string>& lines, bool cut_short, const std::string& name) {
  LineSource s;
  s.path = name;
  s.held_ = std::shared_ptr<const std::vector<std::string>>(std::shared_ptr<void>(), &lines);  // not owned
  s.held_cut_short_ = cut_short;
  return s;
}

// A name with a newline or an escape sequence in it stays on its line of a warning or a table.
std::string LineSource::where(size_t index) const { return fmt::format("{}:{}", printable(path), index + 1); }

void LineSource::scan(const std::function<bool(const Line&)>& each) const {
  if (pipe_) return pipe_->scan(path, each);
  if (!held_) return scan_file(file_, path, each);
  const std::vector<std::string>& lines = *held_;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].size() > kMaxLineBytes) too_long(path, i);
    if (!each(Line{lines[i], i, held_cut_short_ && i + 1 == lines.size()})) return;
  }
}

void LineSource::refuse_nul(const Line& l) const {
  if (const size_t nul = l.text.find('\0'); nul != std::string_view::npos) {
    throw WorkError(fmt::format("{}: a NUL byte at column {}: a damaged file (zeros where text was written: a crash "
                                "while it was written?), not one to read past it", where(l.index), nul + 1));
  }
}

void LineSource::for_each(const std::function<void(const Line&)>& each) const {
  scan([&](const Line& l) {
    refuse_nul(l);
    each(l);
    return true;
  });
}

void LineSource::for_each_json_line(const std::function<void(const Line&)>& each) const {
  scan([&](const Line& l) {
    each(l);
    return true;
  });
}

bool LineSource::any(const std::function<bool(std::string_view)>& pred) const {
  // On a pipe, only its kept start: a line found past it could not be read again by the pass that
  // wants it, and an endless stream would never answer.
  bool found = false;
  size_t bytes = 0;
  scan([&](const Line& l) {
    bytes += l.text.size() + 1;
    return !(found = pred(l.text)) && !(pipe_ && bytes > kPipeRereadBytes);
  });
  return found;
}

std::string LineSource::first_nonblank() const {
  std::string first;
  scan([&](const Line& l) {
    first = trim(l.text);
    return first.empty();
  });
  return first;
}

HeldLines LineSource::hold(size_t max_bytes) const {
  if (held_) return {*held_, held_cut_short_};
  HeldLines held;
  size_t bytes = 0;
  scan([&](const Line& l) {
    bytes += l.text.size() + sizeof(std::string);
    if (bytes > max_bytes) {
      throw WorkError(fmt::format("{}: more than {} bytes of lines at line {}: longer than any log held whole", path,
                                  binary_size_text(static_cast<int64_t>(max_bytes)), l.index + 1));
    }
    held.lines.emplace_back(l.text);
    held.cut_short = l.cut_short;
    return true;
  });
  return held;
}

double parse_decimal(std::string_view digits, const std::string& where, const char* what) {
  const std::string text(digits);  // strtod reads up to a terminating NUL
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  // Decimal only: strtod also reads hexadecimal ("0x6b" would be 107) and "nan" / "inf".
  const bool decimal = text.find_first_not_of("0123456789.eE+-") == std::string::npos;
  if (text.empty() || !decimal || end != text.c_str() + text.size()) {
    throw WorkError(fmt::format("{}: {} '{}' is not a number", where, what, printable(text)));
  }
  if (!std::isfinite(v) || v < 0) {
    const std::string shown = text.size() <= 24 ? printable(text) : fmt::format("of {} characters", text.size());
    throw WorkError(fmt::format("{}: {} {} must be a finite non-negative number", where, what, shown));
  }
  return v;
}

void expect_one_gpu(std::string& current, const std::string& seen, const std::string& where) {
  if (!current.empty() && current != seen) {
    throw WorkError(fmt::format("{}: mismatched GPUs in one file: '{}' here, '{}' before", where, seen, current));
  }
  current = seen;
}

}  // namespace ub
