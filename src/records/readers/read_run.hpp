// Opens a training-step log of either format (benchmark.py's sweep log or our records), chosen
// by its content, not its name.
#pragma once

#include <filesystem>

#include "base/line_source.hpp"
#include "records/run_log.hpp"

namespace ub {

RunLog read_run_log(const LineSource& t, WarmupOnly warmup_only = WarmupOnly::refuse);
RunLog read_run_log(const std::filesystem::path& path);

}  // namespace ub
