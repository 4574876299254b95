// Format detection for training logs; see read_run.hpp.
#include "records/readers/read_run.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "records/readers/records_reader.hpp"
#include "records/readers/sweep_log.hpp"

namespace ub {

RunLog read_run_log(const LineSource& t, WarmupOnly warmup_only) {
  if (looks_like_records(t)) return read_records(t, warmup_only);
  if (looks_like_sweep_log(t)) return read_sweep_log(t, warmup_only);
  // A file of another kind is a usage error (exit 2), as compare and decide say of one.
  throw UsageError(fmt::format("{}: not a training log: expected `===== seq_len=` blocks (the sweep log of "
                              "benchmark.py) or upgradebench records (a context record first)",
                              t.path));
}

RunLog read_run_log(const std::filesystem::path& path) { return read_run_log(LineSource::file(path)); }

}  // namespace ub
