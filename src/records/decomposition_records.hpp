// The `decomposition` record: one step's wall time split into buckets that add up to it
// (analysis/decompose/step_decomposition.hpp), for one GPU of a traced run: the median step's buckets,
// each with its range over the steps, the collectives' total and overlapped time, each bucket's
// achieved rate where the model's FLOPs are known, and the kernels no rule classified. `compare`
// reads it beside bench_decompose.py's printout (records/readers/decomposition_log.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "records/fields.hpp"

namespace ub {

struct DecompositionBucketRecord {
  std::string name;
  double ms = 0, share = 0;    // of the median step
  double min_ms = 0, max_ms = 0;  // over the steps
  double kernel_ms = 0;           // its kernels' (copies', collectives') own time in the median step
  std::optional<double> tflop, tflops;              // where the bucket's FLOPs are known
  std::optional<double> gbytes, gbps;               // where only its bytes are (element-wise work)
  std::optional<double> of_ceiling;                 // the rate against the GPU's ceiling for that work
  std::string ceiling;                              // what of_ceiling is against
};

struct UnclassifiedKernel {
  std::string name;
  double ms = 0;  // over the whole trace
  size_t count = 0;
};

// What a decomposition's `source` says it read: another program's torch.profiler trace, or our
// engine's step (timed under CUPTI, or the trace it wrote).
inline constexpr const char* kTraceSource = "torch.profiler trace";
inline constexpr const char* kEngineSource = "upgradebench engine (CUPTI)";

struct DecompositionRecord {
  std::string source;  // kTraceSource, kEngineSource or "bench_decompose.py"
  std::string file, gpu;
  int64_t device = 0;
  std::optional<int64_t> rank, world_size;  // which rank of a distributed job traced it, where the trace says
  std::optional<int64_t> seqlen;  // the step's tokens per sequence, where known
  int64_t batch = 1;
  std::string steps_from;
  size_t steps = 0;
  std::string step;  // the median step's name
  double step_ms = 0;
  std::optional<double> wall_step_ms;              // the same step timed with profiling off, where measured
  std::vector<DecompositionBucketRecord> buckets;  // add up to step_ms
  double communication_ms = 0, communication_overlapped_ms = 0;
  std::vector<UnclassifiedKernel> unclassified;    // the 20 with most time
};

// Where a decomposition stands among its file's: a distributed job's rank (every rank may be
// device 0 of its own process), else the GPU's device index.
inline int64_t decomposition_gpu_index(const DecompositionRecord& r) { return r.rank.value_or(r.device); }

void to_json(nlohmann::json& j, const DecompositionRecord& r);
DecompositionRecord read_decomposition_record(const Fields& f);

}  // namespace ub
