// Format detection for training logs; see read_run.hpp.
#include "records/readers/read_run.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/text.hpp"
#include "records/readers/records_reader.hpp"
#include "records/readers/sweep_log.hpp"

namespace ub {

namespace {

// A length out of memory below one that ran (a file of two settings, a failure that was not the
// length's): said, since the failure then caps nothing (analysis/memory_headroom.hpp).
RunLog with_failures_below_runs_said(RunLog log) {
  const RunPoint* longest = nullptr;
  for (const RunPoint& p : log.points) {
    if (p.status == PointStatus::ok && (!longest || p.seqlen > longest->seqlen)) longest = &p;
  }
  if (!longest) return log;
  for (const RunPoint& p : log.points) {
    if (p.status != PointStatus::oom || p.seqlen >= longest->seqlen) continue;
    log.warnings.push_back(fmt::format("{}:{}: out of memory at {} tokens, while {} tokens ran (line {}): a file of two "
                                       "settings or a failure that was not the length's; the longest sequence is read "
                                       "from the lengths that ran and the failures past them", printable(log.path), p.line,
                                       p.seqlen, longest->seqlen, longest->line));
  }
  return log;
}

}  // namespace

RunLog read_run_log(const LineSource& t, WarmupOnly warmup_only) {
  if (looks_like_records(t)) return with_failures_below_runs_said(read_records(t, warmup_only));
  if (looks_like_sweep_log(t)) return with_failures_below_runs_said(read_sweep_log(t, warmup_only));
  // A file of another kind is a usage error (exit 2), as compare and decide say of one.
  throw UsageError(fmt::format("{}: not a training log: expected `===== seq_len=` blocks (the sweep log of "
                              "benchmark.py) or upgradebench records (a context record first)",
                              t.path));
}

RunLog read_run_log(const std::filesystem::path& path) { return read_run_log(LineSource::file(path)); }

}  // namespace ub
