// What `predict` reads: the steps measured on the old GPU, split into buckets (a decomposition:
// `decompose` records of our engine or of a trace, or bench_decompose.py's printout; a training
// log: per sequence length, the median step split by its attention share of FLOPs, said so), and
// micro-benchmarks of either GPU (`mamf`, `attention`, `bandwidth`, `nccl` records, mamf-finder.py
// output, bench_flash_attn.py lines) that replace catalog figures.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/predict/prediction.hpp"
#include "base/line_source.hpp"

namespace ub {

// The bucket names of `decompose` and bench_decompose.py, and the kind of work each does.
WorkKind work_kind_of(const std::string& bucket);

// Every decomposition the file holds. WorkError when it holds none.
std::vector<StepInput> steps_from_decompositions(const LineSource& t);

// A training log's points, each split by its attention share of FLOPs: from the records, else
// from `attention_share(seqlen)` (the model's FLOP count), else the point is left out with a
// warning. `step_tflop(seqlen)` gives the model's FLOPs per step where known.
std::vector<StepInput> steps_from_training_log(
    const LineSource& t, const std::function<std::optional<double>(int64_t)>& attention_share,
    const std::function<std::optional<double>(int64_t)>& step_tflop, std::vector<std::string>& warnings);

// A micro-benchmark file: the GPU it measured (as it names it) and what it measured.
struct MeasuredFile {
  std::string gpu;
  MeasuredRates rates;
};
MeasuredFile read_measured(const LineSource& t);

// `b` over `a`: what b measured where a did not.
void merge(MeasuredRates& a, const MeasuredRates& b);

}  // namespace ub
