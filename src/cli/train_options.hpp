// The options of our engine's training step, declared once for every command that runs it:
// `train`, `sweep` (which hands them to a `train` process per length) and `decompose` (the same
// step under CUPTI). One struct holds their values, one function declares them, one turns them into
// the engine's TrainConfig (validated there, before a GPU is touched), and one hands the ones a
// user gave to a child process, which parses them with this same declaration: so every option
// has the same name, meaning and default in all three commands.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/context.hpp"
#include "cli/measuring_shell.hpp"
#include "model/train_config.hpp"

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
  std::string weights, tokens;
  bool mem_debug = false;
  bool checkpointing = false, selective = false, offload_checkpoints = false, no_autotune = false;
  std::string loss_chunk = "0", mlp_tile = "0";
  int device = 0;
  // Data parallelism.
  int zero = 0;
  bool offload_optimizer = false;
  std::string bucket = "0";
  JobOptions job;
  // Profiling after the timed steps.
  bool breakdown = false;
  int profile_steps = 3;

  // What a command runs of the step (the rest of the options are always declared).
  struct Parts {
    bool seqlen = true;    // --seqlen (sweep declares --seqlens instead)
    bool steps = true;     // --steps (decompose declares its own)
    bool parallel = true;  // --zero, --offload-optimizer, --bucket, --gpus, --rendezvous-timeout
    bool breakdown = true; // --breakdown
  };
  // Declares the options on `cmd`, bound to this struct.
  void add_to(CLI::App& cmd, Parts parts);
  // The options that run the engine (all but the workload's shape), for a command that must
  // refuse them where they do not apply (decompose of a trace).
  const std::vector<CLI::Option*>& engine_options() const { return engine_; }
  // The options given on the command line, as the arguments a child process parses with the same
  // declaration (sweep's `train` per length): what was not given keeps its default there too.
  // `leave_out`: options the caller gives the child itself ("--steps").
  std::vector<std::string> given_as_arguments(const std::set<std::string>& leave_out = {}) const;

 private:
  std::vector<CLI::Option*> declared_, engine_;
};

// The engine's configuration, validated (UsageError for what cannot run, before a GPU is touched);
// `seqlen` in place of --seqlen where a command runs several lengths.
TrainConfig train_config(Context& ctx, const TrainOptions& o, std::optional<int64_t> seqlen = std::nullopt);

}  // namespace ub::cli
