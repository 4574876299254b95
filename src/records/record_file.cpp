// Writing and reading record files; see record_file.hpp and docs/records.md.
#include "records/record_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <set>
#include <utility>
#include <string_view>

#include "base/error.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"

namespace ub {

using nlohmann::json;

namespace {

constexpr std::string_view kDamagedLine = "a damaged line skipped";
constexpr long kNamedDamagedLines = 20;

// Writes all of `data`, retrying what a signal or a short write left; false on an error.
bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Whether the file ends in something other than a newline (a line cut short by a hard stop).
bool ends_mid_line(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size == 0) return false;
  char last = '\n';
  return pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n';
}

std::string utc_format(const char* pattern) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, pattern, &tm);
  return buf;
}

}  // namespace

RecordWriter::RecordWriter(const std::filesystem::path& path) : path_(path) {
  // Not through a symbolic link: one planted where the records go (a shared folder) would have
  // them appended to, or a file created at, whatever it names.
  fd_ = UniqueFd(::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644));  // read: the last byte
  if (!fd_ && errno == ELOOP) {
    throw WorkError(fmt::format("{}: a symbolic link: records are written to the file named, never through a link; "
                                "give the file it points to", path.string()));
  }
  if (!fd_) {
    throw WorkError(fmt::format("{}: cannot open for writing records: {}", path.string(), std::strerror(errno)));
  }
  // A half line left by a killed writer must not swallow the next record.
  if (ends_mid_line(fd_.get()) && !write_all(fd_.get(), "\n", 1)) {
    throw WorkError(fmt::format("{}: writing a record failed: {}", path_.string(), std::strerror(errno)));
  }
}

RecordWriter::~RecordWriter() = default;

void RecordWriter::write(const json& record) {
  // Bytes that are not UTF-8 (a file name, text from a streamed trace) become U+FFFD rather than an
  // exception after the records before it were written: JSON lines are UTF-8.
  const std::string line = record.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mutex_);
  if (!write_all(fd_.get(), line.data(), line.size())) {
    throw WorkError(fmt::format("{}: writing a record failed: {}", path_.string(), std::strerror(errno)));
  }
  if (sink_) sink_(line.substr(0, line.size() - 1));
}

void RecordWriter::also_to(std::function<void(const std::string& line)> sink) {
  std::lock_guard lock(mutex_);
  sink_ = std::move(sink);
}

void RecordWriter::sync() {
  std::lock_guard lock(mutex_);
  if (::fsync(fd_.get()) != 0 && errno != EINVAL && errno != EROFS) {
    throw WorkError(fmt::format("{}: flushing records to disk failed: {}", path_.string(), std::strerror(errno)));
  }
}

std::optional<json> parse_record_line(const LineSource& t, const Line& line, std::vector<std::string>& warnings,
                                      const char* what) {
  const std::string where = t.where(line.index);
  try {
    return parse_json_text(trim(line.text), where);
  } catch (const ContradictoryJson&) {
    throw;
  } catch (const WorkError& e) {
    if (line.cut_short) {
      warnings.push_back(fmt::format("{}: truncated last line ignored", where));
      return std::nullopt;
    }
    // The first kNamedDamagedLines of a file are named one by one, then one line says the rest are
    // skipped: a stream of junk must not grow the warnings without bound.
    const std::string mark = fmt::format("{}:", printable(t.path));  // as where() writes it
    const auto named = std::count_if(warnings.begin(), warnings.end(), [&](const std::string& w) {
      return w.starts_with(mark) && w.find(kDamagedLine) != std::string::npos;
    });
    if (named < kNamedDamagedLines) {
      warnings.push_back(fmt::format("{}: {} ({} expected; {})", where, kDamagedLine, what,
                                     std::string(e.what()).substr(where.size() + 2, 120)));
    } else if (named == kNamedDamagedLines) {
      warnings.push_back(fmt::format("{}: {}, and every later one without a warning of its own ({} damaged lines "
                                     "named above)", where, kDamagedLine, kNamedDamagedLines));
    }
    return std::nullopt;
  }
}

void for_each_record(const LineSource& t, const std::function<void(const RecordLine&)>& each,
                     std::vector<std::string>& warnings, const char* what) {
  // A line with a NUL byte (a crash's zeros) is a damaged line, skipped with a warning as
  // parse_json_text refuses it, not the end of the file's reading.
  bool first = true;
  std::optional<std::set<int64_t>> listed;  // the GPU indices the last context record lists, where it lists any
  t.for_each_json_line([&](const Line& line) {
    if (trim(line.text).empty()) return;
    const std::string where = t.where(line.index);
    const bool first_line = std::exchange(first, false);
    const std::optional<json> parsed = parse_record_line(t, line, warnings, what);
    // Every record of the file hangs on its first: a context record that does not read is said as
    // such, with the parser's reason (read again for it), not skipped as a damaged line and then
    // said as "the first record must be the context record" at the next line.
    if (!parsed && first_line && !line.cut_short && line.text.find("\"context\"") != std::string_view::npos) {
      try {
        parse_json_text(trim(line.text), where);
      } catch (const WorkError& e) {
        const std::string why = e.what();
        throw WorkError(fmt::format("{}: the context record does not read as JSON, and every record of the file hangs on "
                                    "it: {}", where, why.rfind(where + ": ", 0) == 0 ? why.substr(where.size() + 2) : why));
      }
    }
    if (!parsed) return;
    const json& r = *parsed;
    if (!r.is_object()) throw WorkError(fmt::format("{}: {} must be a JSON object", where, what));
    const std::string type = r.contains("type") && r.at("type").is_string() ? r.at("type").get<std::string>() : "";
    // A record of a GPU its context record does not list (an edited device, a line of another
    // run): its figures would be kept as a GPU's the run never had.
    if (type == "context") {
      listed.reset();
      if (const auto g = r.find("gpus"); g != r.end() && g->is_array() && !g->empty()) {
        listed.emplace();
        for (const json& x : *g) {
          if (x.is_object() && x.contains("index") && x.at("index").is_number_integer()) listed->insert(x.at("index").get<int64_t>());
        }
      }
    } else if (const auto d = r.find("device"); listed && !listed->empty() && d != r.end() && d->is_number_integer() &&
                                                !listed->contains(d->get<int64_t>())) {
      throw WorkError(fmt::format("{}: a record of GPU {}, which its context record does not list (it lists GPU {}): a "
                                  "line edited, or joined from another run", where, d->get<int64_t>(),
                                  fmt::join(*listed, ", ")));
    }
    // A type that is one of ours but for its case or blanks ("TRAIN_STEP", "train_step "): an
    // edited line that every reader would pass over as another kind's, said here once.
    static const std::set<std::string> kOurTypes = {"context",  "train_step", "train_oom",     "train_error", "attention",
                                                    "mamf",     "bandwidth",  "nccl",          "decomposition",
                                                    "prediction", "train_memory", "train_breakdown", "sweep_max"};
    if (const std::string plain = to_lower(trim(type)); plain != type && kOurTypes.count(plain)) {
      warnings.push_back(fmt::format("{}: a record of type \"{}\" is not one upgradebench writes (\"{}\" is): skipped",
                                     where, printable(type), plain));
      return;
    }
    // A field of the wrong type anywhere in a record is an error naming the line, not a crash.
    try {
      each(RecordLine{r, type, where, line.index});
    } catch (const json::exception& e) {
      throw WorkError(fmt::format("{}: a record field has the wrong type: {}", where, json_error_text(e)));
    }
  });
}

bool looks_like_records(const LineSource& t) {
  const std::string s = t.first_nonblank();
  return s.rfind("{", 0) == 0 && s.find("\"type\"") != std::string::npos && s.find("\"context\"") != std::string::npos;
}

void refuse_records_without_context(const LineSource& t) {
  std::optional<std::pair<size_t, std::string>> first;
  t.scan([&](const Line& l) {
    if (trim(l.text).empty()) return true;
    first.emplace(l.index, std::string(trim(l.text)));
    return false;
  });
  if (!first || first->second.front() != '{') return;
  const nlohmann::json j = nlohmann::json::parse(first->second, nullptr, false);
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string() || j["type"] == "context") return;
  // Without a context record anywhere, the lines are another tool's JSON (train_peer.py's profile
  // line, say), not our records cut short.
  bool context_later = false;
  t.scan([&](const Line& l) {
    const std::string line = trim(l.text);
    if (line.find("\"context\"") == std::string::npos) return true;
    const nlohmann::json r = nlohmann::json::parse(line, nullptr, false);
    context_later = r.is_object() && r.contains("type") && r["type"] == "context";
    return !context_later;
  });
  if (!context_later) {
    throw UsageError(fmt::format("{}: JSON lines of a \"{}\" record and no context record, which our records start "
                                 "with: not a log upgradebench reads here (another tool's output?)", t.where(first->first),
                                 printable(j["type"].get<std::string>())));
  }
  throw WorkError(fmt::format("{}: our records start with their context record, and the first here is a \"{}\" record: "
                              "a file cut at its start, or joined from two", t.where(first->first),
                              printable(j["type"].get<std::string>())));
}

std::string utc_now_iso8601() { return utc_format("%Y-%m-%dT%H:%M:%SZ"); }
std::string utc_now_compact() { return utc_format("%Y%m%d-%H%M%S"); }

}  // namespace ub
