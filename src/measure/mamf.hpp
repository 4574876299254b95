// The matmul ceiling (MAMF, maximum achievable matmul FLOPS): a superset of the peer
// mamf-finder.py. Per shape, every one of cuBLASLt's top-K heuristic algorithms is validated
// against a double-precision reference on sampled outputs, screened, and the fastest timed under
// the noise-based protocol (gpu/timing.hpp) with an L2 flush and a re-randomised output before
// each sample, as the peer does; clocks, power and throttle state are sampled throughout.
// `search` finds the ceiling without the full grid: a coarse sub-grid (every other size), then
// hill-climbing from the best shapes to their grid neighbours, each shape looked at quickly
// (every algorithm validated, three samples each), then the three finalists timed in full.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/device_run.hpp"
#include "core/dtype.hpp"
#include "core/mamf_result.hpp"

namespace ub::measure {

struct MamfConfig {
  std::vector<int64_t> ms, ns, ks;  // the grid (all combinations)
  Dtype dtype = Dtype::bf16;
  int top_k = 8;                    // heuristic algorithms tried per shape
  double warmup_s = 10;             // accelerator warm-up before the first shape
  int min_samples = 20, max_samples = 300;
  double max_seconds_per_shape = 1.0;
  double target_noise = 0.005;
  size_t workspace_bytes = size_t{64} << 20;
  int check_samples = 256;
  uint64_t seed = 1234;
  bool search = false;
  double search_budget_s = 0;       // 0: no limit beyond convergence
  nlohmann::json to_json() const;
};

// Runs on the run's device; writes a record per shape and a summary record.
MamfOutcome run_mamf(const MamfConfig& config, DeviceRun& run);

}  // namespace ub::measure
