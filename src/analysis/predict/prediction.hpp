// `predict`: the new GPU's training step from a measurement on the old one, by the ml-engineering
// guide's own explanation of its speedups: split the old step into buckets (a decomposition, a
// training log that decomposes itself over its lengths, or the FLOP split of a shorter log), scale
// each bucket by what the new GPU does for that kind of work, add the buckets back up. No fitted
// coefficient: every ratio is a measured or published figure named with its source, and an unknown
// figure makes its bucket (and the total) N/A rather than borrowing another GPU's. docs/predict.md
// is the model on one page.
//
//   a bucket's time  = the time its work takes at the old GPU's ceiling for that work (explained:
//                      scaled by the work's ratio; GEMMs shape by shape, gemm_model.hpp)
//                    + the rest, which its work does not explain (kernels below their ceiling,
//                      launch gaps: between 1.0x and HBM's ratio, the point in the middle)
//   time no kernel's work explains (idle, host, an offloaded optimizer) is not assumed to scale:
//                      1.0x, up to HBM's ratio at the high end
//   new step         = the sum of the new parts            speedup = old step / new step
//   interval         = every part at its ratio's low end, and every part at its high end together
//                      (the worst and best cases: the inputs' uncertainties are not assumed independent)
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/predict/gemm_model.hpp"
#include "facts/catalog.hpp"
#include "facts/step_gemms.hpp"
#include "records/provenance.hpp"

namespace ub {

// The kind of work a bucket does, which decides what its time follows on another GPU.
enum class WorkKind {
  matmul,         // GEMMs: the matmul ceiling (MAMF)
  attention,      // the attention kernel's throughput at the sequence length
  memory,         // element-wise, norms, loss, optimizer: HBM bandwidth
  dense_mixed,    // bench_decompose.py's "everything else": GEMMs and memory-bound work together
  communication,  // exposed collectives: the interconnect
  unexplained,    // idle, host time, an offloaded optimizer: time no kernel's work explains
  unscaled,       // memory copies over host links: the same on both
  unknown,        // compute nobody classified: N/A
};
std::string_view to_string(WorkKind k);

// How much faster the new GPU does one kind of work: a point and an interval, and where it comes from.
struct Ratio {
  double point = 0, low = 0, high = 0;
  std::string source;  // "measured mamf 824.9 -> 1520.1 TFLOPS", "catalog HBM 4.8 -> 8.0 TB/s", ...
  static Ratio one(std::string source) { return {1, 1, 1, std::move(source)}; }
};

// One measured step on the old GPU, split into buckets.
struct StepInput {
  std::string path, from;  // from: how the buckets were obtained, in words
  std::string old_gpu;     // as the input names it
  std::optional<int64_t> seqlen;
  std::optional<int64_t> carried_from;  // the measured length this step was carried from (then it is predicted too)
  std::optional<std::string> model;     // the model, where the input names it (our records' context)
  std::optional<int64_t> layers;        // the model's depth in the step, where the input says it
  std::optional<int64_t> layers_carried_from;  // the measured depth this step was carried from
  int64_t batch = 1;
  double step_ms = 0;
  struct Bucket {
    std::string name;
    double ms = 0;
    WorkKind kind = WorkKind::unknown;
    std::optional<double> tflop;  // the work its kernels did (recompute included), where known
  };
  std::vector<Bucket> buckets;  // add up to step_ms
  std::vector<StepGemm> gemms;  // the step's matrix products (the model's, at this length), where known
  StepLevers levers;            // how the step ran, as far as its products' shapes go
  // The input's format ("upgradebench", "benchmark.py", "bench_decompose.py") and the levers its
  // header or context says (records/workload_keys.hpp): what a measured run of the predicted GPU
  // is held to (`report PREDICTIONS MEASURED`).
  std::string format;
  std::map<std::string, std::string> workload;
  std::optional<double> step_tflop;      // the model's FLOPs per step, when known
  std::optional<double> executed_tflop;  // what its kernels executed, recompute included (our engine's decomposition)
  std::optional<double> peak_memory_gib; // as measured on the old GPU
  Provenance provenance;                 // what the input's numbers are: a prediction from example data stays marked
};

// Micro-benchmarks of one GPU that replace catalog figures where given.
struct MeasuredRates {
  std::optional<double> mamf_tflops;       // best median, bf16
  std::vector<ShapeTime> gemm_shapes;      // bf16 products timed one by one (`mamf --shapes-of`): median ms
  std::vector<std::pair<int64_t, double>> attention_tflops;  // (seqlen, forward+backward TFLOPS), sorted
  std::optional<double> hbm_gbps;          // device-to-device copy, out of cache
  std::optional<double> busbw_gbps;        // the largest all_reduce measured
  std::vector<std::string> files;
  std::optional<double> attention_at(int64_t seqlen) const;  // forward+backward TFLOPS measured at that length
};

struct PredictOptions {
  std::optional<double> price_from, price_to;  // USD per GPU-hour
  const Catalog* catalog = nullptr;  // the MAMF efficiencies of sibling parts, for a GPU without its own MAMF
};

// What a part of a bucket follows on the new GPU: the measurement that would pin it down.
enum class Lever { gemm, attention, hbm, interconnect, beyond_ceiling, unexplained, none };

// A part of a bucket's old time and the ratio it scales by.
struct BucketPart {
  std::string what;  // "GEMMs at the old GPU's ceiling", "beyond the ceiling", ...
  double old_ms = 0;
  Ratio ratio;
  Lever lever = Lever::none;
};

struct PredictedBucket {
  std::string name;
  WorkKind kind = WorkKind::unknown;
  double old_ms = 0;
  std::optional<Ratio> ratio;             // null: N/A; else old_ms over the new time, with its source
  std::vector<BucketPart> parts;          // what the ratio is made of
  std::optional<double> ms, ms_low, ms_high;  // on the new GPU (low: the fastest case)
};

// The measurement on the new GPU that would narrow the step's interval most: what it is, the
// command, and the interval it would leave if its ratio came out in the middle of today's.
struct NextMeasurement {
  std::string what, command;
  double speedup_low = 0, speedup_high = 0;
};

struct Prediction {
  StepInput input;
  std::string old_id, new_id, new_name;
  std::vector<PredictedBucket> buckets;
  std::optional<double> step_ms, step_low_ms, step_high_ms;     // null when a bucket is N/A
  std::optional<double> speedup, speedup_low, speedup_high;
  std::optional<double> tflops, mfu;                            // at the predicted step
  std::string limiting;  // the bucket that takes most of the new step, with its ratio
  std::optional<double> break_even, usd_per_mtoken_old, usd_per_mtoken_new;
  std::string cost_verdict;  // CHEAPER / COSTLIER / AMBIGUOUS per token, or "" without prices
  std::optional<bool> fits;  // the old run's peak memory within the new GPU's capacity
  std::optional<double> new_capacity_gib;
  std::optional<NextMeasurement> next;
  std::vector<std::string> notes;
};

Prediction predict_step(const StepInput& input, const Accelerator& from, const Accelerator& to,
                        const MeasuredRates& from_measured, const MeasuredRates& to_measured,
                        const PredictOptions& options);

void to_json(nlohmann::json& j, const Prediction& p);  // the `prediction` record: predicted: true

}  // namespace ub
