// How a suite folder backs a done part; see suite_part_backing.hpp.
#include "records/suite_part_backing.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "base/line_source.hpp"
#include "base/text.hpp"
#include "records/readers/read_run.hpp"

namespace ub {

namespace {

namespace fs = std::filesystem;

// Why a sweep's records read as `log` cannot be continued, or PartDamage::none.
std::pair<PartDamage, std::string> not_continued(const std::optional<RunLog>& log, const ManifestPart& p,
                                                 const SuiteWorkload& w) {
  if (!log) return {PartDamage::not_a_sweep, fmt::format("its records {} are not a sweep's", printable(p.records))};
  if (const std::vector<std::string> d = w.departures_of(*log); !d.empty()) {
    return {PartDamage::other_workload, fmt::format("its records {} are of another workload ({}, theirs then the "
                                                    "manifest's)", printable(p.records), fmt::join(d, "; "))};
  }
  return {PartDamage::none, ""};
}

}  // namespace

std::optional<RunLog> read_sweep_records(const fs::path& records) {
  try {
    return read_run_log(LineSource::file(records.string()), WarmupOnly::leave_out);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

PartBacking backing_of(const fs::path& dir, const ManifestPart& p, const SuiteWorkload& w) {
  std::error_code ec;
  const fs::path records = dir / p.records;
  const fs::file_status st = fs::symlink_status(records, ec);
  if (!fs::exists(st)) return {PartDamage::missing, fmt::format("its records {} are missing", printable(p.records))};
  if (!fs::is_regular_file(st)) {
    return {PartDamage::not_a_file, fmt::format("its records {} are not a file", printable(p.records))};
  }
  if (LineSource::file(records.string()).first_nonblank().empty()) {
    return {PartDamage::empty, fmt::format("its records {} are empty", printable(p.records))};
  }
  const bool sweep = p.name == "sweep";
  std::optional<RunLog> log;
  if (sweep) {
    log = read_sweep_records(records);
    if (auto [damage, why] = not_continued(log, p, w); damage != PartDamage::none) return {damage, why};
  }
  // A sweep that exited with an error keeps what it measured, as a failed one does.
  if (p.exit_code && *p.exit_code != 0) {
    return {PartDamage::failed, fmt::format("it exited with code {}", *p.exit_code), sweep};
  }
  if (!sweep) return {};
  std::vector<int64_t> lacking;
  for (int64_t len : p.lengths_asked()) {
    if (!log->point(len)) lacking.push_back(len);
  }
  if (lacking.empty()) return {};
  return {PartDamage::short_of_lengths,
          fmt::format("its records {} hold neither a step nor an out-of-memory record at {} tokens", printable(p.records),
                      fmt::join(lacking, ", ")),
          true};
}

std::string sweep_not_continued(const fs::path& dir, const ManifestPart& p, const SuiteWorkload& w) {
  return not_continued(read_sweep_records(dir / p.records), p, w).second;
}

}  // namespace ub
