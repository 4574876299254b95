// The records of `train` and `sweep` (the training step): the configuration (model/train_config.hpp
// as the context record writes it), one `train_step`
// per step in benchmark.py's format plus our fields, `train_memory` probes, `train_oom` and
// `train_error` for a length that did not run, `train_breakdown` for a profiled step and
// `sweep_max` for the bisection's result. The Hugging Face peer (bench/peers/train_peer.py)
// writes the same kinds; benchmark.py's sweep logs are read into the same TrainStep.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "facts/model_shape.hpp"
#include "model/train_config.hpp"
#include "model/train_math.hpp"
#include "records/fields.hpp"
#include "records/timing_record.hpp"
#include "base/units.hpp"

namespace ub {


// What a training run's configuration says about the workload, whoever wrote it: what `compare`
// and `memfit` need to know that two runs measured the same thing.
struct TrainWorkload {
  std::optional<std::string> model;  // preset id or config path
  std::optional<int64_t> layers;     // when the run shrank the model
  int64_t batch = 1;                 // micro-batch per GPU
  std::string dtype = "bf16";
};
// A micro-batch beyond this is no batch a GPU holds (a million sequences): a damaged figure, which
// would otherwise multiply every token count and MFU (9e18 gave an MFU of 4e20%).
inline constexpr int64_t kMaxBatch = 1000000;
inline constexpr int64_t kMaxLayers = 100000;
// WorkError naming the field when "batch" is not a whole number from 1 to kMaxBatch or "layers"
// not one from 1 to kMaxLayers.
TrainWorkload read_train_workload(const Fields& config);

struct TrainStep {
  int device = 0;
  int64_t seqlen = 0, batch = 1, step = 0;
  bool warmup = false;
  double exec_time_ms = 0;  // forward + backward + clipping + optimizer step
  std::optional<double> tflops, mfu, hfu, peak_mem_gib, peak_allocated_gib, device_used_gib, loss, grad_norm, flop,
      attention_share;
  std::optional<TelemetrySummary> telemetry;
  // On several GPUs: ranks, the slowest rank (whose time exec_time_ms is; memory is the largest
  // rank's), and the milliseconds its compute stream waited for communication and for the
  // offloaded optimizer (the parts not hidden behind compute).
  std::optional<int> world_size, slowest_rank;
  std::optional<double> exposed_comm_ms, exposed_offload_ms;
  // With offloaded checkpoints: the milliseconds the compute stream waited for their copies.
  // With anything offloaded: the host memory held pinned (the largest rank's).
  std::optional<double> exposed_checkpoint_copy_ms, pinned_host_gib;
  // A mixture of experts: the tokens each expert of each MoE layer took in the step, their least,
  // median and most (dropless routing: imbalance makes the busiest expert the step's pace).
  struct ExpertTokens {
    double min = 0, median = 0, max = 0;
  };
  std::optional<ExpertTokens> expert_tokens;
  // A mixture of experts: the library each of the experts' products went through (gpu/
  // grouped_gemm.hpp: cuBLAS's grouped GEMM or a GEMM per expert, as timed on first use); known
  // after the first step, so in the steps' records rather than the context.
  std::optional<std::string> expert_gemm;
};

// An "expert_tokens" object ({min, median, max}); WorkError naming it when they are not in order.
// `tokens`: the step's (batch x sequence length): top-k routing sends a token to an expert once at
// most, and every token somewhere, so the most an expert took is 1 to `tokens` (0: not known).
TrainStep::ExpertTokens read_expert_tokens(const Fields& f, int64_t tokens);
// WorkError naming `where` when the most an expert took is past the step's `tokens` (0: not known).
void refuse_expert_tokens_past(const TrainStep::ExpertTokens& t, int64_t tokens, const std::string& where);

// The least, median and most of `rows` (tokens per expert, layer after layer); nullopt when empty.
std::optional<TrainStep::ExpertTokens> expert_tokens_of(std::vector<int64_t> rows);

struct MemoryGib {
  double allocated = 0, reserved = 0, peak = 0, device_used = 0;
};

// --mem-debug's probe after a phase of the first step.
struct TrainMemory {
  int64_t seqlen = 0, step = 0;
  std::string phase;  // forward, backward, step
  MemoryGib memory;
  std::optional<int> rank;  // on several GPUs: whose memory
};

// A length that did not run: out of memory (train_oom) or another failure (train_error).
struct TrainFailure {
  bool oom = false;
  int device = 0;
  int64_t seqlen = 0, batch = 1;
  std::string error;
  std::string what;              // oom: what was being allocated
  std::optional<uint64_t> bytes;  // oom: how much
};

// A profiled step split by kernel class and by operation, with achieved rates.
struct BreakdownRow {
  std::string cls, label;
  int launches = 0;
  double ms = 0, flop = 0, bytes = 0;
  double tflops() const { return tflops_from(flop, ms); }
  double gbps() const { return gbps_from(bytes, ms); }
};

// The algorithm the GEMM autotuner kept for one shape.
struct GemmChoice {
  std::string shape;
  int candidates = 0;   // algorithms timed (1: heuristic only)
  int chosen_rank = 0;  // heuristic rank of the one kept
  double best_ms = 0, first_ms = 0;  // tuned time of the kept one and of the heuristic's first
  double flop = 0;
};

struct TrainBreakdown {
  int device = 0;
  int64_t seqlen = 0;
  double step_ms = 0;                 // the profiled step, end to end
  std::vector<BreakdownRow> classes;  // label empty
  std::vector<BreakdownRow> ops;      // by (class, label), in first-seen order
  std::vector<GemmChoice> gemms;
  std::string table() const;          // for stderr
};

// `sweep --find-max`'s result. A record without its granularity searched at sweep's default.
inline constexpr int64_t kFindMaxGranularity = 1024;
struct SweepMax {
  std::optional<int64_t> longest_fit, shortest_out_of_memory;
  int64_t granularity = kFindMaxGranularity;
};

void to_json(nlohmann::json& j, const TrainConfig& c);
void to_json(nlohmann::json& j, const TrainStep& s);
// A step as benchmark.py or our records write it; numbers may be JSON strings ("140.60") in
// benchmark.py's logs (`ours` false), never in our records, where a null or a value of another
// type is refused naming the field. `index` is the step's position, the default for a missing "step".
TrainStep read_train_step(const Fields& f, int64_t index, bool ours = true);
void to_json(nlohmann::json& j, const TrainMemory& m);
void to_json(nlohmann::json& j, const TrainFailure& f);
TrainFailure read_train_failure(const Fields& f);
void to_json(nlohmann::json& j, const TrainBreakdown& b);
void to_json(nlohmann::json& j, const SweepMax& s);

}  // namespace ub
