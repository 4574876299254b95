// What `suite --resume` does with each part of a folder, decided before anything runs, so that a
// dry run shows exactly what the resume would run. A part is kept (done, or skipped for a reason),
// or run: pending, failed and interrupted parts, and done parts the folder no longer backs (their
// records missing, an exit code that is not 0, a sweep short of lengths its command asks for):
// the checks `decide` makes of a folder, turned into what to measure again. A part whose command
// line runs another workload than the manifest's (an edited manifest) refuses the folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "facts/model_shape.hpp"
#include "records/suite_manifest.hpp"

namespace ub::cli {

struct ResumeStep {
  bool run = false;           // false: kept as it is
  bool again = false;         // a done part run again
  bool sweep_resume = false;  // a sweep whose records stay: run with --resume, measuring what they lack
  std::string why;            // why a done part runs again, or a sweep's records are not continued
};

// "" when `command` runs the manifest's workload `w` (or no training step: env, mamf, bandwidth,
// nccl, a trace), else what differs, the command's first ("layers 32 vs 2; batch 1 vs 2").
std::string command_departs(const std::vector<std::string>& command, const SuiteWorkload& w);

// One step per part of `m`, in order. WorkError naming the manifest and the part when a part's
// command is not one its kind of part runs (another subcommand, an option it never gets, --out
// other than its records, another attention shape than `model`'s) or departs from the workload.
std::vector<ResumeStep> plan_resume(const std::filesystem::path& dir, const SuiteManifest& m, const ModelShape& model);

// Moves the records a part is about to write (left by an earlier attempt) to
// DIR/NAME.earlier-N.EXT, the first N free; "" when there were none, else the new place.
// Measured data is never deleted: a part run again writes a file of its own.
std::string set_aside_records(const std::filesystem::path& dir, const ManifestPart& p);

}  // namespace ub::cli
