// The training-step benchmark: the Llama engine (gpu/llama_engine.hpp) at one sequence length,
// one record per step in the seed's benchmark.py format (docs/records.md, train_step):
// exec_time_ms (CUDA events around forward + backward + optimizer step), tflops by the
// foundation's FLOP accounting (core/flops.hpp, MFU convention), mfu against the catalog's dense
// peak for this GPU, peak memory, loss. The first step's loss must be finite and near what random
// initialisation gives (ln vocab + sigma^2 / 2, see train.cpp); every later loss must stay finite.
// The engine itself is validated against the CPU reference by the GPU tests.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "measure/device_run.hpp"
#include "core/model_shape.hpp"
#include "core/train/train_math.hpp"

namespace ub::measure {

struct TrainConfig {
  ModelShape model;
  std::string model_name;  // preset id or config path, as given
  int64_t seqlen = 8192, batch = 1;
  int steps = 10, warmup = 2;  // timed steps, and untimed ones before them
  bool master_weights = true;
  bool checkpointing = false;  // recompute each layer's forward in backward
  int64_t loss_chunk = 0;      // tokens per lm_head + cross-entropy chunk (0: all at once)
  bool autotune_gemm = true;
  bool breakdown = false;      // one more, profiled step: a train_breakdown record
  AdamWParams adam;
  uint64_t seed = 1234;
  bool mem_debug = false;
  std::optional<double> peak_tflops;  // the catalog's bf16 dense peak for this GPU, if known

  nlohmann::json to_json() const;
  void validate() const;  // UsageError for what cannot run, before the GPU is touched
};

struct TrainSummary {
  bool ok = false, oom = false;
  std::string error;
  int steps = 0;  // timed steps recorded
  double median_ms = 0, median_tflops = 0, mfu = 0, peak_mem_gib = 0, last_loss = 0;
};

// Runs the configured steps; each record goes to the run's writer and to `echo`. Out of
// memory is not an exception: a train_oom record, and `oom` in the summary.
TrainSummary run_train(const TrainConfig& cfg, DeviceRun& run, const std::function<void(const nlohmann::json&)>& echo);

}  // namespace ub::measure
