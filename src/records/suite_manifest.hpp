// The manifest of a suite folder (manifest.json): what `suite` was asked to measure (the
// workload, the budget, what the budget dropped), and per part its command line, its records
// file, its estimated time and what became of it (done, failed with the exit code and why,
// interrupted, or not run yet). `suite` rewrites it after every part (a new file renamed over the
// old one, so a reader never sees half of one); `suite --resume` and `decide` read it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "records/run_log.hpp"

namespace ub {

enum class PartStatus { pending, done, failed, interrupted, skipped };
const char* to_string(PartStatus s);

struct ManifestPart {
  std::string name, what;
  std::vector<std::string> command;  // as run, this program's path first
  std::string records;               // file name in the folder
  double estimate_s = 0;
  PartStatus status = PartStatus::pending;
  std::optional<int> exit_code;
  std::string started;  // UTC, when it ran
  double seconds = 0;
  std::string why;  // a failed part: what went wrong

  // The lengths its command asks for with --seqlens (a sweep's), in its order; none without it.
  std::vector<int64_t> lengths_asked() const;
};

// What identifies the workload a suite measured: two folders compare when these agree.
struct SuiteWorkload {
  std::string model;  // preset id or config path, as given
  int64_t layers = 0, batch = 1;
  std::vector<int64_t> seqlens;
  bool checkpointing = false, master_weights = true;
  int64_t mlp_tile = 0, loss_chunk = 0;
  std::vector<std::string> train_args;  // the training options as given

  // "" when `o` is the same workload, else what differs, this one's first ("layers 4 vs 2").
  std::string differs_from(const SuiteWorkload& o) const;
  // What a training run's records say that differs from this workload, theirs first ("layers 32
  // vs 2", "activation_checkpointing 1 vs 0"): depth, batch, and the levers and arithmetic where
  // its records say them.
  std::vector<std::string> departures_of(const RunLog& run) const;
};

struct SuiteManifest {
  std::string created, updated;  // UTC
  std::vector<std::string> argv;
  SuiteWorkload workload;
  std::optional<double> budget_s;
  std::vector<std::string> dropped;
  std::vector<ManifestPart> parts;

  const ManifestPart* part(const std::string& name) const;
  bool complete() const;  // every part done or left out for a reason (skipped)
};

void to_json(nlohmann::json& j, const SuiteManifest& m);
// WorkError naming the file and the field for a manifest that is not one.
SuiteManifest read_suite_manifest(const std::filesystem::path& dir);
// Writes `m` into `dir`/manifest.json through a new file renamed over the old one.
void write_suite_manifest(const std::filesystem::path& dir, const SuiteManifest& m);

// Whether `dir` holds a suite's manifest.
bool is_suite_folder(const std::filesystem::path& dir);

}  // namespace ub
