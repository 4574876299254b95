// A trace's decomposition as the record `decompose` writes and prints: the median step's buckets
// with their ranges over the steps, and, where the workload's FLOPs are known (`--model`,
// `--seqlen`, ...), the achieved rate of the GEMM bucket (dense FLOPs over its time, against the
// catalog's published matmul ceiling) and of the attention bucket (attention FLOPs over its time,
// against the dense peak).
#pragma once

#include <optional>

#include "core/catalog.hpp"
#include "core/flops.hpp"
#include "core/records/decomposition_records.hpp"
#include "core/trace/trace_decomposition.hpp"

namespace ub::trace {

DecompositionRecord summarize(const TraceDecomposition& d, const std::optional<StepFlops>& flops,
                              const Accelerator* gpu, size_t unclassified_listed = 20);

}  // namespace ub::trace
