// The measuring commands' shell, the half without the GPU; see measuring_shell.hpp.
#include "cli/measuring_shell.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "base/error.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "store/history_store.hpp"
#include "store/record_sink.hpp"

namespace ub::cli {

void add_shell_options(CLI::App& cmd, Context& ctx, ShellOptions& o, const std::string& command, ShellParts parts) {
  if (parts.devices) {
    cmd.add_option("--devices,--device", o.devices, "GPU indices, or 'all' (measured at the same time)")->capture_default_str();
  }
  cmd.add_option("--out", o.out,
                 fmt::format("Records file (JSON lines, appended; default upgradebench-{}-<date>.jsonl)", command));
  if (parts.output) o.output.add_to(cmd);
  cmd.add_option("--db", ctx.history_db,
                 "Also add the records to this history database as they are written (SQLite file or "
                 "postgresql://...)");
}

namespace {

// The job's options are checked where they are typed (CLI11 runs these while parsing): a usage
// error, exit 2, before anything looks for a GPU or a launcher ("--gpus 0" was "no usable GPU", 1).
std::string gpus_problem(const std::string& text) {
  if (text == "all") return "";
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || errno == ERANGE || n < 1 || n > kMaxLocalRanks) {
    return fmt::format("'{}' is not a number of GPUs from 1 to {}, or 'all'", text, kMaxLocalRanks);
  }
  return "";
}

std::string timeout_problem(const std::string& text) {
  char* end = nullptr;
  const double s = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(s) || !(s > 0) || s > kMaxRendezvousTimeoutS) {
    return fmt::format("'{}' is not a number of seconds above 0 and up to {:.0f}", text, kMaxRendezvousTimeoutS);
  }
  return "";
}

}  // namespace

std::vector<CLI::Option*> add_job_options(CLI::App& cmd, JobOptions& o) {
  return {cmd.add_option("--gpus", o.gpus, "Without a launcher: run N ranks on this host (N or 'all'), one per GPU")
              ->check(gpus_problem, "N|all"),
          cmd.add_option("--rendezvous-timeout", o.rendezvous_timeout_s, "Seconds the ranks wait for each other")
              ->check(timeout_problem, "SECONDS")
              ->capture_default_str()};
}

void JobOptions::validate() const {
  if (!gpus.empty()) {
    if (const std::string why = gpus_problem(gpus); !why.empty()) throw UsageError("--gpus: " + why);
  }
  if (const std::string why = timeout_problem(fmt::format("{}", rendezvous_timeout_s)); !why.empty()) {
    throw UsageError("--rendezvous-timeout: " + why);
  }
}

std::string records_path(const std::string& command, const std::string& out) {
  refuse_unkept_output(out, "--out");
  refuse_foreign_records(out, {command == "sweep" ? "train" : command});  // a sweep's file holds its points' train runs
  return out.empty() ? fmt::format("upgradebench-{}-{}.jsonl", command, utc_now_compact()) : out;
}

std::unique_ptr<RecordWriter> open_records(const Context& ctx, const std::string& path, const ContextRecord& context) {
  if (!ctx.history_db.empty() && same_file(path, ctx.history_db)) {
    throw UsageError(fmt::format("--db {}: that is the records file (--out): the records and the history database are "
                                 "two files; give another", ctx.history_db));
  }
  auto writer = std::make_unique<RecordWriter>(path);
  if (!ctx.history_db.empty()) history::record_into_history(*writer, ctx.history_db);
  writer->write(context);
  return writer;
}

void add_file_to_history(const Context& ctx, const std::string& path) {
  if (ctx.history_db.empty()) return;
  history::HistoryStore(ctx.history_db).add_file(path);
}

void finish_measurement(Context& ctx, const std::string& command, const PointCounts& counts, bool interrupted,
                        const std::string& records) {
  if (interrupted) {
    ctx.exit_code = kExitInterrupted;
    return;
  }
  if (counts.wrong > 0) {
    throw WorkError(fmt::format("{}: {} of {} point(s) failed their check against the reference and were not timed "
                                "(their records in {} say why)",
                                command, counts.wrong, counts.total(), records));
  }
}

}  // namespace ub::cli
