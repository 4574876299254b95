// A text file as a stream of numbered lines, read afresh by each pass and never held whole: the
// analysis commands read logs of any size in memory that does not grow with them (a reader keeps
// what it derives, not the text). A pass hands each line to a callback; a reader that needs two
// passes (the kind of a log first, then its content) makes two. The same interface serves lines
// already in memory (tests, the history's stored runs, fuzzers).
//
// Every line is bounded (kMaxLineBytes): a longer one is a file that is not a log (/dev/zero, a
// binary, an attack on the readers), refused with its line number instead of filling memory.
// gzip files read decompressed. A file that is not a regular file (a pipe, a device) cannot be
// read twice: it is read a line at a time as the passes ask for its lines, its first
// kPipeHeldBytes kept so that a later pass reads them again (a reader's first pass, which tells
// the kind of a log, looks at its start); a pass that needs more of it again than was kept is a
// WorkError that says to give a file. Memory stays bounded however much the pipe holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ub {

// No log line comes near this; a longer one is a file that is not a log (or an attack on the
// readers): it is refused, naming the line.
inline constexpr size_t kMaxLineBytes = size_t{1} << 20;
// How much of the start of a pipe is kept for the passes after the first.
inline constexpr size_t kPipeHeldBytes = size_t{8} << 20;
// A pass over a pipe that stops at the first line taking it past this many bytes has read kept
// lines only (a line is at most kMaxLineBytes): any pass can look that far, and again.
inline constexpr size_t kPipeRereadBytes = kPipeHeldBytes - kMaxLineBytes;

struct Line {
  std::string_view text;   // without the newline (and a carriage return before it)
  size_t index = 0;        // 0-based; messages print index + 1
  bool cut_short = false;  // the file's last line, without a final newline: a log still being written
};

// Every line of a source in memory, and whether the last one lacks its newline.
struct HeldLines {
  std::vector<std::string> lines;
  bool cut_short = false;
};

class LineSource {
 public:
  // Throws UsageError when the file does not exist, is a directory or cannot be opened.
  static LineSource file(const std::filesystem::path& path);
  // Text in memory, split into lines (`name` stands in for the path in messages).
  static LineSource text(std::string_view text, const std::string& name);
  // Lines in memory; `cut_short`: the last one had no final newline.
  static LineSource lines(std::vector<std::string> lines, bool cut_short, const std::string& name);
  // Lines held elsewhere, read where they are: they must outlive the source.
  static LineSource view(const std::vector<std::string>& lines, bool cut_short, const std::string& name);

  std::string path;  // as messages name it

  // "path:line" for messages (index is 0-based, lines print 1-based).
  std::string where(size_t index) const;
  // Hands the lines to `each` in order until it returns false or the lines end. Throws WorkError
  // for a line longer than kMaxLineBytes or a read error, naming the file.
  void scan(const std::function<bool(const Line&)>& each) const;
  // Every line, in order; a line holding a NUL byte is a WorkError naming it (a reader's C-string
  // step would end the line there, silently: a step lost, a name cut).
  void for_each(const std::function<void(const Line&)>& each) const;
  // Every line, in order, NUL bytes and all: for readers of JSON lines, which skip a damaged line
  // with a warning (the JSON parser refuses a NUL), so the zeros a crash leaves cost one line.
  void for_each_json_line(const std::function<void(const Line&)>& each) const;
  // for_each's WorkError when `l` holds a NUL byte: for a reader of JSON lines that also reads a
  // line of text (a header).
  void refuse_nul(const Line& l) const;
  // Whether some line satisfies `pred` (the pass stops at the first; on a pipe or a device, it
  // looks no further than kPipeRereadBytes of its kept start).
  bool any(const std::function<bool(std::string_view)>& pred) const;
  // The first line that is not blank (trimmed), "" when there is none.
  std::string first_nonblank() const;
  // Every line, in memory: for what keeps the text itself (the history stores it). Past
  // `max_bytes` held (each line's text and its string: a file of short lines costs more than its
  // size) a WorkError naming the file and the limit: what is held is bounded, whatever the source.
  HeldLines hold(size_t max_bytes = SIZE_MAX) const;
  std::vector<std::string> read_all() const { return hold().lines; }
  // Whether the source is a pipe or a device (read once, as the passes go; possibly endless).
  bool is_stream() const { return pipe_ != nullptr; }

 private:
  struct Pipe;  // a pipe's stream, where the passes have read it to, and its kept start

  std::filesystem::path file_;                             // read by each pass, when `held_` is null
  std::shared_ptr<const std::vector<std::string>> held_;  // lines in memory
  bool held_cut_short_ = false;
  std::shared_ptr<Pipe> pipe_;                             // a pipe or a device: read as the passes go
};

// A plain decimal number as a log line prints it (what TextCursor::decimal matched: "..5" and "."
// match too): parsed, or a WorkError "<where>: <what> '<text>' is not a number"; negative or
// non-finite values are refused as well.
double parse_decimal(std::string_view text, const std::string& where, const char* what);

// Every log holds one GPU: the first name seen is kept in `current`; a different one later is a
// WorkError("<where>: mismatched GPUs in one file: 'seen' here, 'current' before").
void expect_one_gpu(std::string& current, const std::string& seen, const std::string& where);

}  // namespace ub
