// A training-step run as the analysis side sees it, whatever wrote it: the sweep logs of the
// ml-engineering guide's benchmark.py (run by its run_sweep.sh) or upgradebench's own records. One point per sequence length:
// its steps, or "out of memory" (which is a data point: this GPU cannot run it).
//
// A point keeps of its steps what the statistics read (PointSteps), not the records: a log of
// millions of steps is read in memory that stops growing at kStepsKept steps per point.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/statistics.hpp"
#include "records/telemetry.hpp"
#include "records/train_records.hpp"

namespace ub {

enum class PointStatus { ok, oom };

// A length with warm-up steps only and no out-of-memory message: an error in a finished log, the
// state of a run still being written (or stopped) for the history, which leaves it out with a
// warning.
enum class WarmupOnly { refuse, leave_out };

// What the statistics read of one steady (not warm-up) step.
struct StepSample {
  double exec_time_ms = 0;
  std::optional<double> tflops;  // as logged
  int device = 0;
  int line = 0;       // of its file (0: not known)
  int64_t step = -1;  // its number as logged (-1: not known)
};

// Steady steps kept per point: every one up to this many, past it a uniform sample of this many.
// Logs have tens of steps per length; a sample this large puts the median within a fraction of a
// percent of the whole set's, and its interval (from the sample's size) says so honestly.
inline constexpr size_t kStepsKept = 16384;

// A point's steps as they are read: the steady ones' samples (reservoir sampling past kStepsKept,
// with a fixed seed: one file gives the same figures every time), the largest peak memory of any
// step, the first steady step's attention share, and each GPU's telemetry folded as it comes
// (the hottest temperature, throttle reasons OR-ed, clocks and power of the last step that had
// them).
class PointSteps {
 public:
  void add(const TrainStep& s, int line = 0);  // `line`: of its file, for messages

  size_t count() const { return warmup_ + steady_seen_; }  // every step read, warm-up too
  size_t steady_count() const { return steady_seen_; }     // steady steps read
  bool has_steady() const { return steady_seen_ > 0; }
  bool sampled() const { return steady_seen_ > kept_.size(); }
  const std::vector<StepSample>& steady() const { return kept_; }  // every one, or the sample
  // Of the warm-up steps, the fastest, the one logged at the most TFLOPS (one step may be both)
  // and the first kWarmupKept: left out of every figure, still held to what a GPU can do.
  static constexpr size_t kWarmupKept = 64;
  const std::vector<StepSample>& warmup_extremes() const { return warmup_extremes_; }
  bool all_have_tflops() const { return steady_seen_ > 0 && without_tflops_ == 0; }
  std::optional<double> peak_mem_gib() const { return peak_mem_gib_; }
  int peak_mem_line() const { return peak_mem_line_; }  // of the step that logged it (0: not known)
  std::optional<double> least_peak_mem_gib() const { return least_peak_mem_gib_; }  // the smallest of any step
  int least_peak_mem_line() const { return least_peak_mem_line_; }
  std::optional<double> attention_share() const { return attention_share_; }
  const std::map<int, TelemetrySummary>& telemetry() const { return telemetry_; }  // by GPU
  // The energy of one steady step, in joules: the steps' time at the mean power of their windows
  // (telemetry.hpp), over the steady steps that had telemetry; nullopt where none had. The mean
  // power is the windows' energy over the windows' time, summed over the steps: the driver's
  // counter moves in steps of about 100 ms on an H200, so one 140 ms window reads 66 or 138 J
  // where a dozen of them read the power within a few percent. Records written before energy was
  // recorded give the samples' mean power instead. Of the job's GPUs, for a step on several.
  std::optional<double> joules_per_step() const;
  const std::string& energy_source() const { return energy_source_; }  // the steps' telemetry's
  // A mixture of experts' tokens per expert over the steady steps that say them (our records):
  // the least of their least, the median of their medians, the most of their most.
  std::optional<TrainStep::ExpertTokens> expert_tokens() const;

 private:
  std::vector<StepSample> kept_, warmup_extremes_;
  size_t warmup_ = 0, steady_seen_ = 0, without_tflops_ = 0;
  uint64_t random_ = 0x9e3779b97f4a7c15ull;  // the reservoir's generator state (splitmix64)
  std::optional<double> peak_mem_gib_, least_peak_mem_gib_, attention_share_;
  int peak_mem_line_ = 0, least_peak_mem_line_ = 0;
  std::map<int, TelemetrySummary> telemetry_;
  struct Energy {
    double window_j = 0, window_s = 0, windowed_step_s = 0;  // steps whose windows have an energy
    double sampled_j = 0;                                    // the others: mean sampled power x time
    size_t steps = 0;
  };
  std::map<int, Energy> energy_;  // by GPU
  std::string energy_source_;
  std::optional<TrainStep::ExpertTokens> expert_extremes_;  // min and max so far
  std::vector<double> expert_medians_;                      // of the first kStepsKept steps
};

struct RunPoint {
  int64_t seqlen = 0;
  PointStatus status = PointStatus::ok;
  std::string oom_message;             // the line that said so
  PointSteps steps;
  std::map<std::string, std::string> header;  // the block's `# gpu=` key=value pairs
  int line = 0;                        // where the point starts in the file
  size_t run = 0;                      // our records: which context record (run) of the file it is in
  // A mixture of experts: tokens per expert (records/train_records.hpp), from the steps or from the
  // Hugging Face peer's expert_load record of the length.
  std::optional<TrainStep::ExpertTokens> expert_tokens;
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
  std::string date, host, command;              // our records' first context record; "" where a log does not say

  const RunPoint* point(int64_t seqlen) const;
};

// The points with warm-up steps only and no out-of-memory message: refused (a WorkError with
// `message(point)`) or left out with that message as a warning.
void leave_out_warmup_only(RunLog& run, WarmupOnly warmup_only, const std::function<std::string(const RunPoint&)>& message);
// A warning for each point whose statistics are of a sample of its steps.
void note_sampled_points(RunLog& run);

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

// One warning ("path:line: ...") per point whose steps' peak memory varies by more than
// kPeakSpread (and half a GiB): one configuration's steps peak alike, so a wide spread is runs of
// different settings mixed in one file, or memory that grows step after step. A fit reads each
// point's largest.
inline constexpr double kPeakSpread = 1.2;
std::vector<std::string> varying_peaks(const RunLog& run);

// How the run's job shared the work, as its config says under either spelling: our records'
// world_size, zero_stage and offload_optimizer, benchmark.py's world_size, zero and offload_optim.
// What it leaves out (or cannot be read) is one GPU, no sharding, no offload.
struct RunSharding {
  int64_t world_size = 1;
  int64_t zero_stage = 0;
  bool offload_optimizer = false;
};
RunSharding sharding_of(const RunLog& run);

}  // namespace ub
