// This program run again as a child process, for the commands made of other commands: `sweep`
// runs a `train` per length, `suite` a command per part. Each child is its own process, so one
// that runs out of memory or loses its GPU context ends alone and its parent records it and goes
// on. The child is this very binary (its real path, so the child's context record names it),
// its standard error the parent's.
#pragma once

#include <string>
#include <vector>

namespace ub::cli {

// The path of this program ("upgradebench" when it cannot be read).
std::string this_program();

struct ChildRun {
  int exit_code = 0;       // 128 + the signal when a signal ended it
  std::string last_error;  // with a log: the last line it wrote to standard error
};

// Runs this program with `args`, its standard output into `stdout_path` (created or truncated;
// "": thrown away), its standard error shown on this process's and, with `stderr_log`, also
// kept in that file; waits for it. WorkError naming `what` when it cannot be started.
ChildRun run_this_program(const std::vector<std::string>& args, const std::string& stdout_path, const std::string& what,
                          const std::string& stderr_log = "");

}  // namespace ub::cli
