// The canonical record format: JSON lines, one `context` record first (what ran, where, on which
// stack, with which configuration), then one record per measurement. docs/records.md is the
// specification. The writer appends and flushes every record as it is written, so an interrupted
// run keeps everything it measured.
#pragma once

#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ub {

inline constexpr const char* kRecordSchema = "upgradebench/1";

class RecordWriter {
 public:
  // Opens `path` for appending (created if missing). Throws WorkError when it cannot.
  explicit RecordWriter(const std::filesystem::path& path);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // One line, flushed to the operating system before returning. Thread-safe.
  void write(const nlohmann::json& record);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::mutex mutex_;  // one writer may serve several GPU workers
};

// The context record: `type: context`, schema, tool version, command, argv, UTC date, host,
// plus the caller's `fingerprint` (gpus, stack, build) and `config` objects.
nlohmann::json make_context_record(const std::string& command, const std::vector<std::string>& argv,
                                   const nlohmann::json& fingerprint, const nlohmann::json& config);

// "2026-11-30T07:01:02Z"
std::string utc_now_iso8601();
// "20261130-070102", for default file names.
std::string utc_now_compact();

}  // namespace ub
