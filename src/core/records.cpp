// Record writing; see records.hpp and docs/records.md.
#include "core/records.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "core/error.hpp"

namespace ub {

RecordWriter::RecordWriter(const std::filesystem::path& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "a");
  if (!file_) {
    throw WorkError(fmt::format("{}: cannot open for writing records: {}", path.string(),
                                std::strerror(errno)));
  }
}

RecordWriter::~RecordWriter() {
  if (file_) std::fclose(file_);
}

void RecordWriter::write(const nlohmann::json& record) {
  const std::string line = record.dump() + "\n";
  std::lock_guard lock(mutex_);
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    throw WorkError(fmt::format("{}: writing a record failed: {}", path_.string(),
                                std::strerror(errno)));
  }
}

namespace {
std::string utc_format(const char* pattern) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, pattern, &tm);
  return buf;
}
}  // namespace

std::string utc_now_iso8601() { return utc_format("%Y-%m-%dT%H:%M:%SZ"); }
std::string utc_now_compact() { return utc_format("%Y%m%d-%H%M%S"); }

nlohmann::json make_context_record(const std::string& command, const std::vector<std::string>& argv,
                                   const nlohmann::json& fingerprint, const nlohmann::json& config) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  nlohmann::json r = {{"type", "context"},   {"schema", kRecordSchema},
                      {"tool", "upgradebench 0.1.0"}, {"command", command},
                      {"argv", argv},        {"date", utc_now_iso8601()},
                      {"host", host},        {"config", config}};
  for (const auto& [k, v] : fingerprint.items()) r[k] = v;
  return r;
}

}  // namespace ub
