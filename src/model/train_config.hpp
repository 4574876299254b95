// What the training engine is asked to run: the model, the sequence and batch, the memory levers
// (checkpointing, MLP tiles, the chunked loss), data parallelism, the optimizer and what to
// profile. `train`, `sweep` and `decompose` build one from the command line; the GPU engine
// (gpu/model/) runs it; records/train_records.hpp writes it into the context record.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "facts/model_shape.hpp"
#include "model/llama_layout.hpp"
#include "model/train_math.hpp"

namespace ub {

struct TrainConfig {
  ModelShape model;
  std::string model_name;  // preset id or config path, as given
  int64_t seqlen = 8192, batch = 1;
  int steps = 10, warmup = 2;  // timed steps, and untimed ones before them
  bool master_weights = true;
  bool checkpointing = false;  // recompute each layer's forward in backward
  bool selective = false;      // ... keeping each layer's attention output and statistics
  bool offload_checkpoints = false;  // ... the kept layer inputs in host memory
  int64_t mlp_tile = 0;        // tokens per MLP tile (0: the whole sequence at once)
  int64_t loss_chunk = 0;      // tokens per lm_head + cross-entropy chunk (0: all at once)
  // Data parallelism: ranks in the job (each trains its own sequences), the ZeRO stage, elements
  // per communication bucket (0: one bucket per unit), AdamW on host threads.
  int world = 1;
  int zero = 0;
  int64_t bucket_elems = 0;
  bool offload_optimizer = false;
  int host_threads = 0;  // the offloaded AdamW's (0: every core)
  bool autotune_gemm = true;
  bool decompose = false;      // after the timed steps, profiled ones: a decomposition record
  bool breakdown = false;      // ... and a train_breakdown record of the median one
  int profile_steps = 3;       // how many profiled steps
  std::string trace_out;       // where to write them as a Chrome trace ("" : nowhere)
  AdamWParams adam;
  uint64_t seed = 1234;
  // Hugging Face weights to start from (model/hf_checkpoint.hpp) instead of the seed's random
  // initialisation, and token ids to train on instead of the seed's synthetic ones ("": none).
  std::string weights, tokens;
  bool mem_debug = false;
  std::optional<double> peak_tflops;  // the catalog's bf16 dense peak for this GPU, if known

  void validate() const;  // UsageError for what cannot run, before the GPU is touched
  StepOptions step_options() const;
};

}  // namespace ub
