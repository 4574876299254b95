// The per-kernel-class breakdown of one profiled training step (gpu/step_profiler.hpp: each
// operation's kernels' time, from CUPTI): time per
// class (gemm, attention, norm/elementwise, cross_entropy, optimizer, other) and per operation
// label, each with its achieved rate (TFLOPS for GEMMs and attention, GB/s of estimated HBM
// traffic for the rest), so it can be set against the class's ceiling (`mamf` at the GEMM
// shapes, `attention`, `bandwidth`); plus the algorithm the GEMM autotuner kept per shape. The
// record is records/train_records.hpp's TrainBreakdown.
#pragma once

#include <vector>

#include "gpu/step_profiler.hpp"
#include "records/train_records.hpp"

namespace ub::measure {

TrainBreakdown make_breakdown(const std::vector<gpu::StepProfiler::Op>& ops, double step_ms,
                              std::vector<GemmChoice> gemms);

}  // namespace ub::measure
