// What a sequence-length sweep still has to do: which lengths a records file already holds (so
// `sweep --resume` skips them), and the bisection `sweep --find-max` runs on the out-of-memory
// boundary. No GPU here: the sweep command runs each point as its own `train` process.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/line_source.hpp"

namespace ub {

enum class PointOutcome { measured, oom, failed };

// Per sequence length, what the records file says: measured (at least `steps` steady train_step
// records), oom (train_oom), or failed (train_error, or fewer steady steps than asked for: a
// point stopped before it finished is run again). A missing file is empty; a damaged line (a hard
// stop mid-write) is skipped, the points around it kept; so is a training record whose seqlen is
// no whole number. Each skipped line is said in `warnings` ("path:LINE: ..."), when given: the
// point it held is measured again.
std::map<int64_t, PointOutcome> sweep_outcomes(const std::filesystem::path& records, int steps = 1,
                                               std::vector<std::string>* warnings = nullptr);
std::map<int64_t, PointOutcome> sweep_outcomes(const LineSource& records, int steps = 1,
                                               std::vector<std::string>* warnings = nullptr);

// What in the records file's context records differs from the sweep about to continue it
// (`expected`: the configuration keys that decide the workload, as the train context writes
// them: model, layers, batch, master_weights, activation_checkpointing, loss_chunk); "" when
// nothing does. `sweep --resume` refuses to mix two workloads in one file.
std::string resume_mismatch(const std::filesystem::path& records, const nlohmann::json& expected);
std::string resume_mismatch(const LineSource& records, const nlohmann::json& expected);

// Bisection between the longest length known to fit and the shortest known not to, to a
// multiple of `granularity` tokens. Without a known fit it halves from the failure; without a
// known failure it doubles from the fit (up to `ceiling`). Aimed (a memory fit's prediction of
// the longest length, memfit's line), it tries the prediction first and steps 10% from the side
// it lands on instead of doubling or halving: at minutes per step of a full model at long
// sequences, a few probes near the answer instead of a walk from afar.
class MaxFitSearch {
 public:
  MaxFitSearch(int64_t granularity, int64_t ceiling) : granularity_(granularity), ceiling_(ceiling) {}
  void fits(int64_t seqlen);
  void does_not_fit(int64_t seqlen);
  void aim(int64_t predicted) { aim_ = predicted; }
  // The next length to try, never past the ceiling (a step that would pass it tries the ceiling
  // itself); nullopt when done (the gap is one granule, or the ceiling fits).
  std::optional<int64_t> next() const;
  std::optional<int64_t> longest_fit() const { return fit_; }
  std::optional<int64_t> shortest_failure() const { return fail_; }

 private:
  int64_t granularity_, ceiling_;
  std::optional<int64_t> fit_, fail_, aim_;
};

}  // namespace ub
