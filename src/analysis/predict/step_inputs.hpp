// What `predict` reads: the steps measured on the old GPU, split into buckets (a decomposition:
// `decompose` records of our engine or of a trace, or bench_decompose.py's printout; a training
// log: per sequence length, the median step split by its attention share of FLOPs, said so), and
// micro-benchmarks of either GPU (`mamf`, `attention`, `bandwidth`, `nccl` records, mamf-finder.py
// output, bench_flash_attn.py lines) that replace catalog figures.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/predict/prediction.hpp"
#include "base/line_source.hpp"
#include "facts/flops.hpp"
#include "facts/model_shape.hpp"
#include "records/provenance.hpp"
#include "records/readers/attention_log.hpp"
#include "records/readers/bandwidth_log.hpp"
#include "records/run_log.hpp"

namespace ub {

// The bucket names of `decompose` and bench_decompose.py, and the kind of work each does.
WorkKind work_kind_of(const std::string& bucket);

// Every decomposition the file holds. WorkError when it holds none.
std::vector<StepInput> steps_from_decompositions(const LineSource& t);

// The model's FLOPs of one step at a length: model FLOPs (the MFU convention) with `recompute`
// false, the work the kernels do (activation checkpointing's recompute included) with it true;
// nullopt when the model is not known.
using StepFlopsAt = std::function<std::optional<StepFlops>(int64_t seqlen, bool recompute)>;

// A training log's points. With the model's FLOPs at three lengths or more, the log decomposes
// itself (sweep_fit.hpp): per-step time no kernel's work explains, dense work and attention; else
// each point is split by its attention share of FLOPs (from the records, else from `flops`), and
// without either it is left out with a warning. `peak_tflops` bounds the fit (0: unknown).
std::vector<StepInput> steps_from_training_log(const RunLog& run, const Provenance& provenance, const StepFlopsAt& flops,
                                               double peak_tflops, std::vector<std::string>& warnings);

// What the model adds to a step measured at a known length: its FLOPs per step where the input did
// not say them, and its matrix products shape by shape as our engine runs that model (with the
// step's checkpointing, MLP tiles and loss chunks).
void add_model(StepInput& s, const ModelShape& m);

// How a run ran, as far as its products' shapes go: checkpointing (benchmark.py's gc, our
// activation_checkpointing), MLP tiles and loss chunks, from a log's configuration.
StepLevers levers_of(const std::map<std::string, std::string>& config, int64_t batch);
// The workload keys of a header or context (records/workload_keys.hpp: the levers, the step's
// arithmetic) and the dtype, with their values; bench_decompose.py's "offload" as benchmark.py's
// "offload_optim".
std::map<std::string, std::string> workload_of(const std::map<std::string, std::string>& config);

// A micro-benchmark file: the GPU it measured (as it names it) and what it measured. A figure no
// GPU of the catalog measures (analysis/run_limits.hpp) is refused.
struct MeasuredFile {
  std::string gpu;
  MeasuredRates rates;
  std::optional<AttentionLog> attention;  // an attention log: its problem, to pair with the other GPU's
  std::optional<BandwidthLog> bandwidth;  // a bandwidth run: its kernel, to pair with the other GPU's
};
MeasuredFile read_measured(const LineSource& t, const Catalog& catalog);

// `b` over `a`: what b measured where a did not.
void merge(MeasuredRates& a, const MeasuredRates& b);

}  // namespace ub
