// What every subcommand may need from the installation: where the data files are, and the
// catalog, loaded once on first use. Passed by reference to the subcommands (no globals).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "facts/catalog.hpp"
#include "facts/model_shape.hpp"

namespace ub::cli {

class Context {
 public:
  // --data-dir; empty means: $UPGRADEBENCH_DATA, then <exe>/../share/upgradebench/data, then
  // the source tree's data/ (for a binary run from its build folder).
  std::string data_dir_flag;
  std::vector<std::string> argv;  // the command line, for context records
  int exit_code = 0;              // set by a command that finished but must not exit 0
  // --db of a measuring command: the history database its records also go to as they are written.
  std::string history_db;

  std::filesystem::path data_dir() const;
  const Catalog& catalog();
  // Preset id or config.json path, with --layers applied when layers > 0 (negative: UsageError).
  ModelShape model(const std::string& name, int64_t layers = 0) const;

  // The folder of the running executable.
  static std::filesystem::path exe_dir();

  // Where the report's front-end libraries may be: $UPGRADEBENCH_WEB, the source tree's web/
  // beside data/, the installed share/upgradebench/web.
  std::vector<std::filesystem::path> web_module_candidates() const;

 private:
  std::unique_ptr<Catalog> catalog_;
};

}  // namespace ub::cli
