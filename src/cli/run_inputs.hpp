// The logs `compare` and `report` take: a file, or runs of the history database selected by id
// (`run:12`, `run:3-12`, `run:3,5,9`; `history list` shows the ids), read back as the file they
// came from. --db names the database (the default one otherwise).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "base/line_source.hpp"
#include "cli/context.hpp"

namespace ub::cli {

struct LogInputs {
  std::string db;

  void add_to(CLI::App& cmd);
  // The file `arg`, or the runs it selects. UsageError for a selection that is not one or an id
  // not in the database.
  LineSource read(const std::string& arg) const;
};

// "3-5,9" -> {3, 4, 5, 9}; UsageError naming `arg` otherwise.
std::vector<int64_t> parse_run_ids(const std::string& ids, const std::string& arg);

}  // namespace ub::cli
