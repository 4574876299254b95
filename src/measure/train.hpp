// The training-step benchmark: the Llama engine (gpu/model/llama_engine.hpp) at one sequence length, a
// point whose one timed unit is a step (forward + backward + optimizer step, CUDA events around
// it), sampled a fixed number of times with the warm-up steps run first and left out of the
// statistics. Each step is a record in benchmark.py's format plus our fields (docs/records.md,
// train_step): tflops by facts/flops.hpp's MFU convention, mfu against the catalog's dense peak,
// peak memory, loss, telemetry of that step.
//
// The engine is held to the CPU reference by the GPU tests; at run time every step's loss must be
// finite, and the first one near what random initialisation gives (ln vocab + sigma^2 / 2, see
// train.cpp): a step that fails that is a train_error record. Out of memory is a train_oom
// record naming what did not fit. With `decompose` (or `breakdown`) set, more steps run after the
// timed ones under CUPTI (gpu/step_profiler.hpp) and become a decomposition record (and a
// train_breakdown record of the median one): measure/engine_decomposition.hpp.
//
// On several GPUs (a communicator given) every rank runs this benchmark at once, each on its own
// sequences (the next `batch` of the same synthetic stream after the ranks before it); the ranks
// agree that every one of them could prepare the step before the first collective, so memory
// running out on one rank is a train_oom of the job, not a hang. Each step's record, written by
// rank 0, is the slowest rank's time, the largest rank's memory, the loss over all ranks'
// sequences and the exposed communication; --mem-debug's probes come from every rank.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/decompose/kernel_classes.hpp"
#include "facts/catalog.hpp"
#include "measure/driver.hpp"
#include "records/decomposition_records.hpp"
#include "records/train_records.hpp"

namespace ub::gpu {
class NcclComm;
}

namespace ub::measure {

struct TrainSummary {
  bool ok = false, oom = false;
  std::string error;
  int steps = 0;  // timed steps recorded
  double median_ms = 0, median_tflops = 0, mfu = 0, peak_mem_gib = 0, last_loss = 0;
};

class TrainBenchmark : public Benchmark {
 public:
  // `classes` name the kernels launched outside the engine's operations and `gpu` gives the
  // ceilings the decomposition's rates are set against (either may be null).
  TrainBenchmark(const TrainConfig& config, DeviceRun& run, trace::KernelClasses* classes = nullptr,
                 const Accelerator* gpu = nullptr, gpu::NcclComm* comm = nullptr);
  ~TrainBenchmark() override;

  bool next() override;
  std::string label() const override;
  std::unique_ptr<Point> prepare(cudaStream_t stream) override;
  std::string failed(const WorkError& error, bool out_of_memory) override;

  const TrainSummary& summary() const { return summary_; }
  // The decomposition of the profiled steps, once made.
  const std::optional<DecompositionRecord>& decomposition() const { return decomposition_; }

 private:
  friend class TrainPoint;
  TrainConfig cfg_;
  DeviceRun& run_;
  bool done_ = false;
  TrainSummary summary_;
  trace::KernelClasses* classes_;
  const Accelerator* gpu_;
  gpu::NcclComm* comm_;
  std::optional<DecompositionRecord> decomposition_;
};

}  // namespace ub::measure
