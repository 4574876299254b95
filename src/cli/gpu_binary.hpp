// Why there are two executables: the GPU libraries cost memory the moment they are loaded
// (cuBLASLt alone makes a process 150 MiB resident before it does anything), and most commands
// (`compare`, `report`, `decide`, `memfit`, `decompose` of a trace, ...) only read files. So
// `upgradebench` is built without them, and `upgradebench-gpu` beside it is the same program
// built with them. A command that needs a GPU, run in `upgradebench`, becomes the same command line
// in `upgradebench-gpu` (exec: the same process, standard streams, signals and exit code).
#pragma once

#include <string>

#include "cli/context.hpp"

namespace ub::cli {

// Replaces this process with upgradebench-gpu running the same command line. WorkError naming
// `command` when there is none beside this executable (a build without CUDA) or it cannot run.
[[noreturn]] void run_in_gpu_binary(const Context& ctx, const std::string& command);

// Whether upgradebench-gpu is beside this executable (a build with the GPU side).
bool has_gpu_binary();

}  // namespace ub::cli
