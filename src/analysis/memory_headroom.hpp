// The longest sequence a GPU holds for a training run, and how it is known: measured (sweep
// --find-max found the boundary), or fitted (facts/memfit.hpp's line of peak memory against
// tokens, read at the GPU's usable capacity). A length measured out of memory caps what the fit
// says: a fit can miss what the allocator does near the top, a measured failure cannot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "records/run_log.hpp"
#include "records/train_records.hpp"

namespace ub {

struct LongestSequence {
  std::optional<int64_t> tokens;           // per sequence, batch as the run's
  std::optional<int64_t> fitted;           // what the fit alone says
  std::optional<int64_t> out_of_memory_at; // the shortest length measured out of memory past every one that ran
  bool measured = false;                   // found by --find-max
  bool capped = false;                     // the fit was above a measured out-of-memory length
  bool ran_past_fit = false;               // the fit was below a length the run ran: `tokens` is that length
  // --find-max found `tokens` fit and did not settle the boundary: it tried no longer length (its
  // ceiling) or stopped on a failure that was not memory, short of `unsettled_below` (none: past
  // the ceiling). `tokens` is then what is known to fit, not the most.
  bool lower_bound = false;
  std::optional<int64_t> unsettled_below;
  std::string how;                         // in words, for the page
  int64_t measured_longest = 0;            // the longest length the run measured (0: none)
  bool own_gpu = true;                     // read at the capacity of the GPU the run measured
  bool runs_hold = true;                   // that capacity holds what the run ran (not a smaller one asked)
  int64_t batch = 1;                       // the run's sequences per step
  std::optional<int64_t> at_batch_one;     // with a batch above 1: the fit read at one sequence per step
  std::string job;                         // sharded_job of the run: "" for a GPU on its own

  // How far past the longest length measured a fitted longest sequence is a guess: a line through
  // a few short lengths says little of memory 16x further on (the allocator, a kernel's workspace).
  static constexpr int64_t kFarPastMeasured = 16;
  // "187585 tokens is 46x the longest length measured (4096): the fitted line carried that far is
  // a guess; measure near it (sweep --find-max)", where the longest is such a fit; else nothing.
  std::optional<std::string> guess() const;
  // For a table's cell: "187585", "261120 (found)" (by sweep --find-max), "at least 16384 (found;
  // none longer tried)", "64512 (capped: out of memory)", "327680 (ran; the fit says 324813)",
  // "187585 (a guess: 46x the longest measured)", or `none` where no length is known.
  std::string cell(const char* none = "unknown") const;

  // Whether a sequence of `need` tokens fits, at the run's batch: yes where the GPU ran it, or the
  // longest known is at least it; no where it is past what the fit or --find-max bounds, or at or
  // past a length measured out of memory; unknown where nothing bounds it (one length measured,
  // --find-max unsettled there).
  enum class Fit { yes, no, unknown };
  Fit holds(int64_t need) const;
  // Why holds(need) is unknown, in words ("sweep --find-max found 16384 fit and no longer length
  // out of memory ...").
  std::string unknown_why(int64_t need) const;
  // Whether holds(need) rests on the fit (or --find-max): not where the GPU ran `need`, or ran out
  // of memory at or below it (measurements decide those, whatever the fit says).
  bool rests_on_fit(int64_t need) const;
  // With a batch above one: the longest sequence one sequence per step holds, where that reaches
  // `need` (gradient accumulation keeps the global batch); else none.
  std::optional<int64_t> one_per_step(int64_t need) const;
  // Where at_batch_one is a fit carried more than kFarPastMeasured past the most tokens a step
  // measured: the warning; else none.
  std::optional<std::string> one_per_step_guess() const;
  // What the GPU holds, for a verdict line: "359533 at most", "at least 16384, below 65536 out of
  // memory", "8192 ran", "out of memory at 16384" or "unknown".
  std::string held() const;
};

// The job a run's memory is per GPU of: "" for a GPU on its own holding all of its state, else
// "per GPU of a job of 8 GPUs (ZeRO-3, the optimizer offloaded)", or "on one GPU with the
// optimizer offloaded" (our records' world_size, zero_stage and offload_optimizer; benchmark.py's
// world_size, zero and offload_optim). Such a peak is no measure of one GPU holding it all.
std::string sharded_job(const RunLog& run);

// `capacity_gib`: where the fit is read (the run's GPU's usable capacity, or another GPU's);
// `found`: sweep --find-max's result, when the run has one (its longest fit is then the answer on
// the run's own GPU). `same_gpu`: the capacity is the run's own GPU's (its out-of-memory lengths cap).
// `runs_hold`: the capacity is at least what the run's GPU had, so that a length the run ran fits
// it (not so for a smaller capacity asked of the same GPU: memfit --capacity-gib).
LongestSequence longest_sequence(const RunLog& run, std::optional<double> capacity_gib,
                                 const std::optional<SweepMax>& found, bool same_gpu = true, bool runs_hold = true);

}  // namespace ub
