// What `suite` runs on a machine so that `decide` can answer for a workload, how long each part
// should take, and how the plan shrinks to fit a budget. The parts, in the ml-engineering guide's
// order of what the decision needs:
//
//   env               the stack fingerprint (what the two machines must share)
//   mamf              the matmul ceiling: mamf-finder.py's 27 shapes
//   mamf-step         the step's own products (mamf --shapes-of) at the shortest length
//   bandwidth         HBM copy / read / write, 1 GiB and 4 GiB
//   attention         the model's attention shape at the sweep's lengths
//   sweep             the training step over the lengths, then --find-max for the longest that fits
//   decompose-short   where the step's time goes at the shortest length ...
//   decompose-long    ... and at the longest
//   nccl              collectives, when the machine has more than one GPU
//   trace-N           the user's torch.profiler traces (--trace), decomposed
//
// Each part is one command line of this program, run as its own process, its records in a file of
// the suite's folder. Times are estimated before anything runs, from the work each part does and
// the GPU's catalog figures, at rates measured on an H200 scaled by the GPU's bf16 peak (an
// unknown GPU is taken as an H200): the budget is a plan, the manifest records what it took.
//
// A budget too small for the whole plan drops, in this order, until the plan fits: the bisection
// for the longest length, the longest length (attention, sweep and its decomposition), the step's
// decomposition at the longest length, then lengths from the longest down to one; each drop is said.
// A budget the smallest plan (env, the ceiling, one length) cannot meet is a usage error.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "facts/catalog.hpp"
#include "model/train_config.hpp"

namespace ub {

struct SuitePart {
  std::string name;                // "mamf", "sweep", ...
  std::string what;                // a line of the plan: what it measures
  std::vector<std::string> args;   // its command line, without the program
  std::string records;             // the file in the folder its records go to
  bool stdout_is_records = false;  // env: its --json output is the record
  double estimate_s = 0;
};

struct SuiteRequest {
  TrainConfig train;                    // the workload (layers applied), levers and steps, validated
  std::vector<std::string> train_args;  // the training options as given, handed to sweep
  std::vector<std::string> engine_args; // ... those of them decompose takes (no data parallelism, --steps)
  std::vector<int64_t> seqlens;         // ascending
  bool find_max = true;
  int64_t find_max_ceiling = 0;         // 0: none given
  int gpus = 1;                         // on this machine
  int device = 0;                       // the GPU every part measures (train's --device)
  std::vector<std::string> traces;      // torch.profiler traces to decompose
  std::optional<double> budget_s;
  const Accelerator* gpu = nullptr;     // this machine's GPU in the catalog; null: unknown
};

struct SuitePlan {
  std::vector<SuitePart> parts;
  std::vector<std::string> dropped;  // what the budget took out, in words
  double total_s() const;
};

// The plan for `r`, fitted into its budget. UsageError when even the smallest plan is over it.
SuitePlan plan_suite(const SuiteRequest& r);

// The window the attention part measures: the layers' own when they all share one (0: full
// attention), else full attention, as the layers without a window run it.
int64_t attention_window(const ModelShape& m);

// The estimated seconds of one training step of `cfg` at `seqlen` on `gpu` (null: an H200).
double estimated_step_seconds(const TrainConfig& cfg, int64_t seqlen, const Accelerator* gpu);

}  // namespace ub
