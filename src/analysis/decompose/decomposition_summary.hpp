// A decomposition as the record `decompose` writes and prints: the median step's buckets with
// their ranges over the steps and, where the work each bucket does is known, its achieved rate
// against the GPU's ceiling for that kind of work: FLOPs over the bucket's time for GEMMs
// (against the catalog's published matmul ceiling) and attention (against the dense peak), bytes
// over its time for element-wise, loss and optimizer work (against HBM bandwidth). A trace says
// nothing of FLOPs: they come from the model's shape (`--model`, `--seqlen`, ...); our engine
// knows each operation's FLOPs and bytes.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "analysis/decompose/trace_decomposition.hpp"
#include "facts/catalog.hpp"
#include "facts/flops.hpp"
#include "records/decomposition_records.hpp"

namespace ub::trace {

// The work of one (the median) step, by bucket; 0 where unknown.
struct BucketWork {
  std::array<double, kBuckets> flop{}, bytes{};
};

// What the model's FLOP count says: its dense FLOPs are GEMM work, its attention FLOPs attention's.
BucketWork model_work(const StepFlops& flops);

DecompositionRecord summarize(const TraceDecomposition& d, const std::optional<BucketWork>& work,
                              const Accelerator* gpu, size_t unclassified_listed = 20);

}  // namespace ub::trace
