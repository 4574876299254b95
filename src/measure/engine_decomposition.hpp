// Our engine's profiled steps (gpu/step_profiler.hpp: CUPTI's record of every kernel, copy and
// fill, each kernel tagged with the operation that launched it) turned into what `train
// --breakdown` and `decompose` report: the per-operation breakdown of the median step (its
// kernels' time per class and label, with the rates of the FLOPs and bytes each operation does)
// and the decomposition of every step into the buckets of analysis/decompose/step_decomposition.hpp, on
// the same clock and by the same rule as a torch.profiler trace. A kernel's bucket is its
// operation's class; a kernel launched outside any operation is classified by its name
// (data/kernel_classes.json), as a trace's would be.
#pragma once

#include <string>
#include <vector>

#include "analysis/decompose/decomposition_summary.hpp"
#include "analysis/decompose/kernel_classes.hpp"
#include "gpu/step_profiler.hpp"
#include "records/train_records.hpp"

namespace ub::measure {

struct EngineProfile {
  TrainBreakdown breakdown;               // of the median step
  trace::TraceDecomposition decomposition;  // every profiled step
  trace::BucketWork work;                 // the median step's FLOPs and bytes by bucket
};

// The bucket of an operation class of the engine (gemm, attention, norm/elementwise,
// cross_entropy, optimizer, communication; moe: routing, whose kernels are told by name, its
// GEMMs going to gemm; anything else: other).
trace::Bucket bucket_of_class(const std::string& cls);

// WorkError when no step was profiled or a step holds no kernel.
EngineProfile analyse_profile(gpu::StepProfiler::Profile profile, trace::KernelClasses& classes,
                              const std::string& gpu_name, int device, std::vector<GemmChoice> gemms);

}  // namespace ub::measure
