// The guide's memory question, lever by lever. Part 2 of the ml-engineering guide says "does not
// fit" is rarely a hard wall: activation checkpointing, MLP tiles and a chunked loss, an
// offloaded optimizer and offloaded checkpoints each trade step time for memory. Given runs of
// one workload with different levers (each a sweep of lengths with their peak memory), this says
// for each GPU the longest sequence each set of levers holds (memfit's line at that GPU's usable
// capacity, capped by a length measured out of memory on that GPU, or what sweep --find-max
// found there), and what the levers cost in step time against the run with the fewest, at the
// longest length both measured on one GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/memory_headroom.hpp"
#include "records/run_log.hpp"

namespace ub {

// What a run did to save memory, from its configuration (our context record, or benchmark.py's
// header: gc, liger, offload_optim).
struct MemoryLevers {
  bool checkpointing = false, mlp_tiles = false, chunked_loss = false, offloaded_optimizer = false,
       offloaded_checkpoints = false;
  bool selective = false;  // checkpointing that keeps the attention outputs too (--selective-checkpointing)
  int count() const;
  std::string name() const;  // "checkpointing + MLP tiles + chunked loss", or "none"
  bool operator==(const MemoryLevers&) const = default;
};
MemoryLevers memory_levers(const RunLog& run);

// A GPU the ladder is read for: its name, usable capacity, and whether a run was measured on it
// (then that run's out-of-memory lengths and --find-max result hold).
struct LadderGpu {
  std::string name;
  std::optional<double> capacity_gib;
  // Whether `run` was measured on this GPU.
  std::function<bool(const RunLog&)> measured_on;
};

struct LeverRung {
  const RunLog* run = nullptr;
  MemoryLevers levers;
  std::vector<LongestSequence> longest;  // per GPU of the ladder
  // Step time against the rung with the fewest levers, at the longest length both measured on
  // one GPU (unset for that rung, and where no length is shared).
  std::optional<int64_t> cost_at;
  std::optional<double> step_time_ratio;
};

struct LeverLadder {
  std::vector<LadderGpu> gpus;
  std::vector<LeverRung> rungs;  // fewest levers first
  // The first rung (fewest levers) whose longest sequence on GPU `g` reaches `seqlen`; null if none.
  const LeverRung* first_reaching(size_t g, int64_t seqlen) const;
  // The rung whose longest sequence on GPU `g` is the longest; null when none is known.
  const LeverRung* furthest(size_t g) const;
  // A rung's step-time cell: "1.03x at 131072", "base" for the rung with the fewest levers, "-".
  std::string cost_text(const LeverRung& r) const;
};

// UsageError when the runs are not of one workload (model, layers, batch) or two have the same
// levers. `found[i]`: sweep --find-max's result for runs[i], when known.
LeverLadder lever_ladder(const std::vector<const RunLog*>& runs, std::vector<LadderGpu> gpus,
                         const std::vector<std::optional<SweepMax>>& found = {});

}  // namespace ub
