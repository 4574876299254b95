// The options of our engine's training step, shared by `train` and `decompose` (which runs the
// same step under CUPTI): one place declares them, one turns them into a TrainConfig.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/context.hpp"
#include "records/train_records.hpp"

namespace ub::cli {

struct TrainOptions {
  std::string model = "llama-3.1-8b";
  int64_t layers = 0;
  std::string seqlen = "8k";
  int64_t batch = 1;
  int steps = 10, warmup = 2;
  std::string precision = "master";
  AdamWParams adam;
  uint64_t seed = 1234;
  bool mem_debug = false;
  bool checkpointing = false, selective = false, no_autotune = false;
  std::string loss_chunk = "0", mlp_tile = "0";
  int device = 0;
  std::string out;
  // Data parallelism (train and sweep)
  int zero = 0;
  bool offload_optimizer = false;
  std::string bucket = "0";
  std::string gpus;
  double rendezvous_timeout_s = 120;
};

// The workload's shape: --model, --layers, --seqlen, --batch.
void add_workload_options(CLI::App& cmd, TrainOptions& o);
// How the engine runs it: steps, precision, AdamW, checkpointing, the chunked loss, the GEMM
// autotuner, --mem-debug, --device, --out. Returns the options' names (for a command that must
// refuse them where they do not apply). Without `steps_option` the command declares --steps itself.
std::vector<std::string> add_engine_options(CLI::App& cmd, TrainOptions& o, bool steps_option = true);

// Data parallelism: --zero, --offload-optimizer, --bucket, --gpus, --rendezvous-timeout.
void add_parallel_options(CLI::App& cmd, TrainOptions& o);

// UsageError for what cannot run, before a GPU is touched.
TrainConfig train_config(Context& ctx, const TrainOptions& o);

}  // namespace ub::cli
