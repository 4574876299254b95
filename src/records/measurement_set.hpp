// What one GPU measured for the decision, gathered from a suite folder (its manifest says which
// file holds which part) or from files of any kind, told by their content (records/readers/
// log_kind.hpp): the matmul ceiling and the step's own products, HBM bandwidth, attention, the
// training sweep with the longest length found to fit, the step's decompositions, collectives,
// the software stack, and what the numbers are (measured or example data, the weakest of the
// files'). A part that did not finish is named in the warnings, never read as if it had.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/line_source.hpp"
#include "records/provenance.hpp"
#include "records/readers/attention_log.hpp"
#include "records/readers/bandwidth_log.hpp"
#include "records/readers/decomposition_log.hpp"
#include "records/readers/mamf_log.hpp"
#include "records/readers/nccl_log.hpp"
#include "records/run_log.hpp"
#include "records/suite_manifest.hpp"
#include "records/train_records.hpp"

namespace ub {

struct MeasurementSet {
  std::string where;  // the folder, or the files' first
  std::string gpu;    // as the files name it
  std::string catalog_id;  // a suite's: the catalog entry its machine matched the GPU to (env.json), "" for none
  std::set<std::string> gpu_uuids;  // of the GPUs our records name (a peer's log names none)
  std::optional<SuiteManifest> manifest;
  std::map<std::string, std::string> stack;  // component -> version, as the files say
  // Each file's libraries as its context records name them (component -> versions).
  std::vector<std::pair<std::string, std::map<std::string, std::set<std::string>>>> file_stacks;
  Provenance provenance;  // the weakest of its files
  std::vector<std::pair<std::string, Provenance>> not_measured;  // each file that says it is no measurement
  std::optional<MamfLog> ceiling, step_products;
  std::optional<BandwidthLog> bandwidth;
  std::optional<AttentionLog> attention;
  std::optional<RunLog> sweep;
  std::optional<SweepMax> found;                               // sweep --find-max's result
  std::vector<DecompositionLog> decompositions;                // as the files come
  std::optional<NcclLog> nccl;
  std::vector<std::string> warnings;
};

// A suite folder: UsageError for a folder that is not one; an unfinished part is a warning.
MeasurementSet read_suite_folder(const std::filesystem::path& dir);

// Files of any kind, grouped by the GPU each names, in the order the GPUs first appear. A file
// naming no GPU joins the group before it; a kind a group holds twice is a UsageError naming both.
std::vector<MeasurementSet> read_measurement_files(const std::vector<LineSource>& files);

}  // namespace ub
