// Two training runs side by side (the ml-engineering guide's part 2, made a computation over the logs): per
// sequence length the TFLOPS of each, the speedup with its interval and verdict, MFU against
// each GPU's catalog peak, the attention share of FLOPs, peak memory, out-of-memory points, and
// with prices $/token and time to train. Above it the catalog's hardware ratios, and the stack
// check: software that differs between the runs is named, the guide's intended differences (the
// attention backend) apart.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/run_limits.hpp"
#include "analysis/speedup.hpp"
#include "facts/catalog.hpp"
#include "facts/model_shape.hpp"
#include "records/run_log.hpp"

namespace ub {

struct CompareOptions {
  std::optional<double> price_old, price_new;  // USD per GPU-hour
  std::optional<double> tokens;                // time to train this many tokens ...
  int64_t gpus = 1;                            // ... on this many GPUs
  std::optional<double> power_usd_per_kwh;     // electricity, for GPUs owned rather than rented
  double pue = 1.0;                            // the facility's power over the GPUs' (facts/cost.hpp)
  bool strict = false;                         // unintended stack differences are errors
  bool force = false;                          // compare different models / batch sizes anyway
  // One measurement on both sides (every step timed alike) is refused: compared with itself it says
  // nothing of a second GPU. A prediction's table sets this: its old run gives the old side of every row.
  bool old_run_beside_itself = false;
};

// A point's throughput: the TFLOPS its records hold (the median over its steady steps), else the
// model's FLOPs per step (facts/flops.hpp) over its median step time; MFU against the GPU's dense
// peak in the run's dtype. What `compare` and the report of one run show for a point.
struct PointThroughput {
  std::optional<double> tflops, mfu;
};
PointThroughput point_throughput(const RunLog& run, const RunPoint& p, const PointStats& stats,
                                 const std::optional<ModelShape>& model, const Accelerator* gpu);

struct SideFigures {
  std::string status = "absent";  // ok, oom, absent
  std::optional<Summary> step_time;  // steady steps: median, mean, min, max, median interval
  std::optional<double> step_ms, tflops, mfu, peak_gib, usd_per_mtok, usd_per_step, hours_to_train;
  std::optional<double> tokens_per_joule, energy_usd_per_mtok;  // where the steps' telemetry had power
  std::string energy_source;
  size_t steady_steps = 0;
  std::optional<TrainStep::ExpertTokens> expert_tokens;  // a mixture of experts: tokens per expert
};

struct CompareRow {
  int64_t seqlen = 0;
  SideFigures old_side, new_side;
  std::optional<double> attention_share;
  std::optional<Speedup> speedup;
  std::optional<double> cost_ratio;        // new $/token over old
  std::optional<double> wall_clock_ratio;  // new time over old, same tokens, same GPU count
  std::optional<double> energy_ratio;      // new tokens per joule over old
  std::string note;                        // "old cannot run this", ...
};

struct StackDifference {
  std::string key, old_value, new_value;
  bool intended = false;
};

struct Comparison {
  RunLog old_run, new_run;
  const Accelerator* old_gpu = nullptr;
  const Accelerator* new_gpu = nullptr;
  std::optional<ModelShape> model;
  std::optional<double> peak_ratio, mamf_ratio, bandwidth_ratio;  // new / old, from the catalog
  std::optional<double> break_even;
  std::optional<double> power_usd_per_kwh;  // as given, for the energy table
  double pue = 1.0;
  std::vector<CompareRow> rows;
  std::vector<StackDifference> stack;
  bool stack_mismatch = false;  // an unintended difference exists
  std::vector<std::string> warnings;
};

// The model a run names, shrunk to its layers; nullopt (with a warning) when it names none or
// an unknown one.
std::optional<ModelShape> run_model(const RunLog& run, const std::filesystem::path& models_dir,
                                    std::vector<std::string>& warnings);

// The FLOPs of one step of `run` (its batch) of `model`: what the run's figures are checked
// against (analysis/run_limits.hpp); nothing without a model.
RunStepFlops run_step_flops(const RunLog& run, const std::optional<ModelShape>& model);

// What makes two runs other workloads, each in a few words ("different depth: 4 vs 32 layers"):
// model, depth, batch, dtype, and the levers that change a GPU's work (records/workload_keys.hpp);
// empty for one workload. `compare` refuses a difference unless forced.
std::vector<std::string> workload_differences(const RunLog& old_run, const RunLog& new_run);
// The `keys` whose values two runs' configurations differ in, each as "gc: 1 vs 0 (not said)" (the
// first run's first; true and false as 1 and 0). A key one run leaves out is, where both runs are
// of one format, that format's default: default_of(key), or nullopt where it has none (then
// compared only where both say it); between formats, only where both say it.
std::vector<std::string> config_differences(const RunLog& old_run, const RunLog& new_run,
                                            const std::vector<std::string>& keys,
                                            const std::function<std::optional<std::string>(const std::string&)>& default_of);

// refuse_impossible_points and refuse_expert_tokens_not_of for `run` on the GPU and the model it
// names (the catalog's, the models folder's), for a reader that needs neither otherwise.
void refuse_impossible_run(const RunLog& run, const Catalog& catalog, const std::filesystem::path& models_dir);
// The same on a GPU and a model already found (either may be unknown).
void refuse_impossible_run(const RunLog& run, const Accelerator* gpu, const std::optional<ModelShape>& model);

// What the measurements say, one sentence per sequence length: the speedup against break-even
// (with prices) and the wall-clock gain, and the lengths only one GPU can run.
std::vector<std::string> measured_conclusions(const Comparison& c);

// The catalog's new/old ratios (peak in the run's dtype, published MAMF, HBM) of c.old_gpu and
// c.new_gpu; none where either is unknown.
void set_catalog_ratios(Comparison& c);

Comparison compare_runs(RunLog old_run, RunLog new_run, const Catalog& catalog,
                        const std::filesystem::path& models_dir, const CompareOptions& options);

// For `compare` and `report` of two runs (not `decide`, whose verdict says it): a UsageError when
// no length ran on both, naming each side's lengths: there is nothing to compare.
void refuse_no_common_length(const Comparison& c);

}  // namespace ub
