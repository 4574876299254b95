// Format detection for training logs; see read_run.hpp.
#include "core/readers/read_run.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/readers/records_reader.hpp"
#include "core/readers/seed_sweep.hpp"

namespace ub {

RunLog read_run_log(const std::filesystem::path& path) {
  const TextLines t = read_text_lines(path);
  if (looks_like_records(t)) return read_records(t);
  if (looks_like_seed_sweep(t)) return read_seed_sweep(t);
  throw WorkError(fmt::format("{}: not a training log: expected `===== seq_len=` blocks (the seed's "
                              "sweep log) or upgradebench records (a context record first)",
                              path.string()));
}

}  // namespace ub
