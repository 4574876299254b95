// The canonical record file: JSON lines, one `context` record first (what ran, where, on which
// stack, with which configuration), then one record per measurement. docs/records.md is the
// specification; records/*_records.hpp hold one struct per record kind.
//
// Writing: each record is one write(2) of the whole line to a file opened with O_APPEND, so a
// process killed at any instant leaves whole lines behind (at worst a last line cut short by
// the kernel's own limits, never two records glued); a file that does not end in a newline gets
// one before the first record. sync() (fsync) ends a measured point.
// Reading: every reader goes through for_each_record, which parses each line and tolerates a
// damaged line anywhere (a run still being written, or stopped mid-line) with a warning.
#pragma once

#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/line_source.hpp"
#include "base/unique_fd.hpp"

namespace ub {

inline constexpr const char* kRecordSchema = "upgradebench/1";

class RecordWriter {
 public:
  // Opens `path` for appending (created if missing). Throws WorkError when it cannot.
  explicit RecordWriter(const std::filesystem::path& path);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // One line, handed to the operating system before returning. Thread-safe.
  void write(const nlohmann::json& record);
  // Flushes what was written to the disk (the end of a measured point).
  void sync();
  // Also hands every line written from now on (without its newline) to `sink`, in the order
  // written, under the same lock (`--db`: the history database). The file is written first: a
  // sink that fails cannot lose a record; it reports its own errors and must not throw.
  void also_to(std::function<void(const std::string& line)> sink);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  UniqueFd fd_;
  std::mutex mutex_;  // one writer may serve several GPU workers
  std::function<void(const std::string&)> sink_;
};

// One parsed line of a record file.
struct RecordLine {
  const nlohmann::json& json;
  std::string type;   // "" when the object has no string "type"
  std::string where;  // "path:line"
  size_t index = 0;   // 0-based line index
};

// A line of `t` parsed as JSON (base/json_text.hpp's bounds); a line that is not (the truncated
// last line of a file still being written, a line a hard stop damaged) is nullopt, with a warning
// naming it: the records around it are kept.
std::optional<nlohmann::json> parse_record_line(const LineSource& t, const Line& line, std::vector<std::string>& warnings,
                                                const char* what = "a record");

// Calls `each` for every non-blank line that is a JSON object; a line that is not JSON is skipped
// with a warning (parse_record_line). `what` names the expected content in the warnings and
// errors ("a record", "a result line").
void for_each_record(const LineSource& t, const std::function<void(const RecordLine&)>& each,
                     std::vector<std::string>& warnings, const char* what = "a record");

// Whether the first non-blank line is a context record (one pass that stops there).
bool looks_like_records(const LineSource& t);

// WorkError "<path>:<line>: our records start with their context record, and the first here is a
// "<type>" record ..." where the first non-blank line is a record of ours of another type (a file
// cut at its start, or joined): said before "not a file we read". Nothing otherwise.
void refuse_records_without_context(const LineSource& t);

// "2026-11-30T07:01:02Z"
std::string utc_now_iso8601();
// "20261130-070102", for default file names.
std::string utc_now_compact();

}  // namespace ub
