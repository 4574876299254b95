// A training-step run as the analysis side sees it, whatever wrote it: the sweep logs of the
// ml-engineering guide's benchmark.py (run by its run_sweep.sh) or upgradebench's own records. One point per sequence length:
// its steps, or "out of memory" (which is a data point: this GPU cannot run it).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/records/train_records.hpp"
#include "core/statistics.hpp"

namespace ub {

enum class PointStatus { ok, oom };

// A length with warm-up steps only and no out-of-memory message: an error in a finished log, the
// state of a run still being written (or stopped) for the history, which leaves it out with a
// warning.
enum class WarmupOnly { refuse, leave_out };

struct RunPoint {
  int64_t seqlen = 0;
  PointStatus status = PointStatus::ok;
  std::string oom_message;             // the line that said so
  std::vector<TrainStep> steps;
  std::map<std::string, std::string> header;  // the block's `# gpu=` key=value pairs
  int line = 0;                        // where the point starts in the file
  size_t run = 0;                      // our records: which context record (run) of the file it is in

  std::vector<const TrainStep*> steady() const;  // steps that are not warm-up
};

struct RunLog {
  std::string path;
  std::string format;  // "benchmark.py" or "upgradebench"
  std::string gpu;     // as the GPU reported itself ("NVIDIA H200")
  std::map<std::string, std::string> software;  // name -> version (torch, cuda, cudnn, ...)
  std::map<std::string, std::string> config;    // everything else the header says
  std::optional<std::string> model;             // preset id or config path, when known
  std::optional<int64_t> layers;                // when the run shrank the model
  int64_t batch = 1;                            // micro-batch per GPU
  std::string dtype = "bf16";
  std::vector<RunPoint> points;                 // sorted by seqlen
  std::vector<std::string> warnings;            // tolerated oddities, counted
  std::string provenance;                       // `# provenance: ...`: what the numbers are

  const RunPoint* point(int64_t seqlen) const;
};

// The points with warm-up steps only and no out-of-memory message: refused (a WorkError with
// `message(point)`) or left out with that message as a warning.
void leave_out_warmup_only(RunLog& run, WarmupOnly warmup_only, const std::function<std::string(const RunPoint&)>& message);

// Steady-state figures of one point (warm-up excluded). Throws WorkError when there is none.
struct PointStats {
  Summary time_ms;                    // per-step time
  std::optional<Summary> tflops;      // as logged
  std::optional<double> peak_mem_gib; // the largest seen
  size_t steady_steps = 0;
};
PointStats point_stats(const RunLog& run, const RunPoint& p);

// (tokens, peak GiB) of every point that ran and recorded its peak memory: what a memory fit reads.
std::vector<std::pair<double, double>> memory_points(const RunLog& run);

}  // namespace ub
