// What no GPU can measure in a training run, refused before its figures are used: `compare`,
// `predict`, `report` and `memfit` would otherwise carry a damaged or hand-edited line into a
// speedup, a prediction or a memory fit (a 0.001 ms step gave an MFU of 40 million percent).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "facts/catalog.hpp"
#include "facts/model_shape.hpp"
#include "records/readers/attention_log.hpp"
#include "records/readers/bandwidth_log.hpp"
#include "records/readers/decomposition_log.hpp"
#include "records/readers/mamf_log.hpp"
#include "records/run_log.hpp"

namespace ub {

// The FLOPs of one step of the run at `seqlen` (batch included), where its model is known.
using RunStepFlops = std::function<std::optional<double>(int64_t seqlen)>;

// WorkError naming the file, the length and the figure, for the first point of `run` with (its
// warm-up steps held to the same, though they count in no figure):
// - a step faster than `gpu` could do the model's FLOPs (its fastest steady step);
// - a step's logged TFLOPS more than 5% from its work over its time (one figure said twice that
//   disagrees): the model's FLOPs where known, else the median work of the point's steps;
// - a logged TFLOPS past the GPU's peak;
// - a peak memory past what the GPU holds.
// What neither the GPU nor the model bounds is not checked.
void refuse_impossible_points(const RunLog& run, const Accelerator* gpu, const RunStepFlops& step_flops);

// WorkError naming the file, line and length for tokens per expert that `model` (at the depth the
// run ran) cannot route: any in a run of a dense model or of layers none of which has experts (the
// records are of another model), or where the MoE layers' experts each take top_k x tokens /
// experts on average, a busiest expert below that average, a least one above it, or a median past
// the layers' routed tokens over half their experts.
void refuse_expert_tokens_not_of(const RunLog& run, const ModelShape& model);

// WorkError "<where>: a peak of N GiB in use, more than the GPU holds" past `gpu`'s memory.
void refuse_peak_past_memory(double peak_gib, const Accelerator& gpu, const std::string& where);

// WorkError for a step decomposition (a bench_decompose.py printout or our records) of a GPU the
// catalog knows with a bucket past that GPU's dense bf16 peak, a `# wall` line's peak memory past
// what the GPU holds, or a bucket's MFU that is not its TFLOPS over the GPU's dense bf16 peak (the
// script's convention, and ours). `decompose`, `compare`, `decide`, `predict` and `history add`
// hold decompositions to it.
void refuse_impossible_decomposition(const DecompositionLog& d, const Catalog& catalog);

// "<where>: the catalog does not know the <gpu>: its figures are held to no peak ..." for a GPU
// name the catalog does not know (every check here bounds nothing for it), said by each command
// that reads such a log; nothing for a known GPU or a log that names none.
std::optional<std::string> unknown_gpu_warning(const std::string& gpu, const Catalog& catalog, const std::string& where);

// What a step's FLOPs count: the model's (the MFU convention: printouts, training logs), or what
// its kernels executed (our engine's decomposition: recompute included).
enum class StepWork { model, executed };

// WorkError "<path>: a step of X TFLOP is not <model>'s work at <seqlen> tokens (Y TFLOP) ...<remedy>"
// where a step's FLOPs are more than 2% from `model`'s at its length and batch (executed: below
// the model's, or above it with every recompute, FlopOptions' flash_backward and recompute): an
// 8k step's FLOPs labelled 2k would be predicted, stored and compared as a 2k step. `remedy`: how
// to name the model and depth the step ran, where the caller takes them from options.
void refuse_step_not_of_model(const std::string& path, double step_tflop, int64_t seqlen, int64_t batch,
                              const ModelShape& model, const std::string& remedy, StepWork work = StepWork::model);

// The same for bench_decompose.py's printout: its TOTAL line's FLOPs (its buckets' where it has
// none) at its `seq=` (without one, at the length whose work the step is, refused where no length
// is), one sequence a rank (the script's micro-batch of 1); and its `attention(FA)` and
// `everything else` FLOPs, each the model's split at that length. Our records, and a printout
// without FLOPs, are not checked here. Returns the length it held the printout to (its seq=, or the
// length its work is), nullopt where it checked nothing.
std::optional<int64_t> refuse_printout_not_of_model(const DecompositionLog& d, const ModelShape& model,
                                                    const std::string& remedy);

// WorkError naming the file and the figure for what no GPU the catalog knows measures, held by
// every command that reads these logs (`compare`, `decide`, `predict --measured`, `history add`):
// - a matmul shape whose TFLOPS (its best sample) is past its GPU's dense peak in its dtype;
// - an attention point past its GPU's dense bf16 peak;
// - a copy out of cache past its GPU's HBM bandwidth and 10%.
// A GPU the catalog does not know bounds nothing.
void refuse_impossible_ceiling(const MamfLog& l, const Catalog& catalog);

// WorkError naming `where` (a database and a run) for a stored TFLOPS figure (`metric` at `x`:
// "mamf.tflops.<dtype>", "train.tflops", "attention.fwd_tflops", ...) past `gpu`'s dense peak in
// its dtype (bf16 where the metric names none), or in a dtype `gpu` does not execute. `history add` stores none; one edited in is not
// shown as a figure by show, trend or fleet. Other metrics, and GPUs the catalog does not know,
// are not bounded here.
void refuse_impossible_stored_figure(const std::string& where, const std::string& metric, double x, double median,
                                     const std::string& gpu, const Catalog& catalog);
void refuse_impossible_attention(const AttentionLog& l, const Catalog& catalog);
void refuse_impossible_bandwidth(const BandwidthLog& l, const Catalog& catalog);

}  // namespace ub
