// The records of `mamf` (the matmul ceiling): its configuration, one `mamf` record per shape
// (every heuristic algorithm's check, the screening times, the winner's algorithm, its time
// statistics, TFLOPS and telemetry) and one `mamf_summary` per GPU. Shapes read from
// mamf-finder.py's printout fill the same struct with what that format says (the TFLOPS).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "facts/dtype.hpp"
#include "records/fields.hpp"
#include "records/timing_policy.hpp"
#include "records/timing_record.hpp"

namespace ub {

// A shape of a listed set (--shapes-of): which products of a training step it is, and how many
// times the step runs it.
struct ListedShape {
  std::string name;  // "qkv fwd, o dgrad"
  int64_t count = 1;
};

struct MamfConfig {
  std::vector<int64_t> ms, ns, ks;  // the grid (all combinations), or with `listed` the shapes (ms[i], ns[i], ks[i])
  std::vector<ListedShape> listed;  // shapes of a training step (facts/step_gemms.hpp), one per ms[i]
  std::string listed_from;          // what they are the products of ("llama-3.1-8b, 4 layers, seqlen 8192")
  Dtype dtype = Dtype::bf16;
  int top_k = 8;                    // heuristic algorithms tried per shape
  BenchmarkTiming timing{10, {20, 300, 0.0, 1.0, 0.005, 10, 0}};  // each shape's winner
  size_t workspace_bytes = size_t{64} << 20;
  int check_samples = 256;
  uint64_t seed = 1234;
  bool search = false;
  double search_budget_s = 0;  // 0: no limit beyond convergence
  // UsageError for what cannot run (before a GPU is touched).
  void validate() const;
};

// One algorithm checked against the double-precision reference on sampled outputs.
struct GemmCheck {
  int rank = 0;  // heuristic rank of the algorithm checked
  bool ok = false;
  int samples = 0, failures = 0, nans = 0;
  double worst_ratio = 0;  // max |got - ref| / tolerance over the samples
  std::string detail;      // the worst sample, for the error message
};

// A cuBLASLt algorithm as its configuration attributes describe it.
struct AlgoInfo {
  int heuristic_rank = 0;  // 0 = cuBLASLt's first choice
  int id = -1, tile = -1, stages = -1, split_k = -1, reduction = -1, swizzle = -1, custom = -1;
  size_t workspace = 0;
  float waves = 0;
  std::string label() const;  // "algo 66 tile 18 stages 12 splitK 1"
};

struct ScreenedAlgo {
  int rank = 0;
  double median_ms = 0;
};

// A `mamf` record: one shape.
struct MamfShape {
  int device = 0;
  int64_t m = 0, n = 0, k = 0;
  double mean_tflops = 0, median_tflops = 0, max_tflops = 0;
  bool ok = false;
  std::string error;  // why the shape has no timing (validation failed, unsupported shape)
  std::string dtype;
  bool quick = false;  // --search's quick look (screening only)
  double elapsed_s = 0;
  std::vector<GemmCheck> checks;
  std::vector<ScreenedAlgo> screened;
  std::optional<AlgoInfo> algo;  // the winner
  int algos_tried = 0, algos_valid = 0;
  std::optional<TimeStats> time;
  TelemetrySummary telemetry;
  std::optional<ListedShape> listed;  // a shape of a training step: which products, how many times

  std::string shape() const;  // "2048x2048x13312"
  double flops() const;       // 2 M N K
};

// A `mamf_summary` record: the best shape by mean, median and max, and the means across shapes.
struct MamfBest {
  double tflops = 0;
  std::string shape;
  int device = 0;
};
struct MamfSummary {
  int device = 0;
  int shapes = 0, shapes_failed = 0, shapes_screened = 0;
  std::optional<MamfBest> best_mean, best_median, best_max;
  // Across the shapes measured: arithmetic and geometric means of their mean and median TFLOPS.
  std::optional<double> arithmetic_of_means, arithmetic_of_medians, geometric_of_means, geometric_of_medians;
  // Listed shapes of a training step: their FLOPs over their time as the step runs them (each
  // shape's median time times its count), the rate at which this GPU does the step's products.
  std::optional<double> step_tflops;
  double elapsed_s = 0;
  bool interrupted = false;
};

void to_json(nlohmann::json& j, const MamfConfig& c);
MamfConfig read_mamf_config(const Fields& f);
void to_json(nlohmann::json& j, const GemmCheck& c);
void to_json(nlohmann::json& j, const AlgoInfo& a);
void to_json(nlohmann::json& j, const MamfShape& s);
MamfShape read_mamf_shape(const Fields& f);
void to_json(nlohmann::json& j, const MamfSummary& s);

}  // namespace ub
