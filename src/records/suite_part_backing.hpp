// Whether a suite folder still backs a part its manifest calls done: its records are there, a
// file, not empty, from a part that exited cleanly, and (a sweep's) records of the manifest's
// workload holding every length the sweep's command asks for. One list, read by `suite --resume`
// (which measures such a part again) and by `decide` (which refuses the folder, naming the file).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "records/run_log.hpp"
#include "records/suite_manifest.hpp"

namespace ub {

enum class PartDamage {
  none,
  missing,           // its records are not there
  not_a_file,        // a folder, a pipe, a device, a link where the records should be
  empty,             // nothing but blanks
  not_a_sweep,       // a sweep part's records are not a training sweep's
  other_workload,    // a sweep part's records are of another workload than the manifest's
  failed,            // done, says the manifest, with a non-zero exit code
  short_of_lengths,  // a sweep part's records hold no step at a length its command asks for
};

struct PartBacking {
  PartDamage damage = PartDamage::none;
  std::string why;  // "its records sweep.jsonl are missing"; "" where nothing is wrong
  // A sweep's records of the workload: what it measured stays, and a resume continues it.
  bool records_continue = false;
};

// How the folder `dir` backs the done part `p` of a suite of workload `w`: the first damage found,
// in the order of the enum.
PartBacking backing_of(const std::filesystem::path& dir, const ManifestPart& p, const SuiteWorkload& w);

// A sweep's records, read as `suite --resume` and `decide` read them; none where they are not a
// training sweep's (or cannot be read).
std::optional<RunLog> read_sweep_records(const std::filesystem::path& records);

// Whether a sweep's records can be continued by `sweep --resume`: "" when they are a training
// sweep's of workload `w`, else why not ("its records sweep.jsonl are of another workload (...)").
std::string sweep_not_continued(const std::filesystem::path& dir, const ManifestPart& p, const SuiteWorkload& w);

}  // namespace ub
