// One driver for every benchmark (the shape of nccl-tests and nvbench): a benchmark is a
// descriptor that says what it prepares, how a result is checked, what one timed unit of work
// is and how a measured point becomes a record; the driver does the rest the same way for all
// of them:
//
//   for each point the benchmark names (a list, or an adaptive search deciding from what it has
//   measured so far), until interrupted:
//     prepare it (allocate, fill inputs)       an exception here is a failed point (out of
//     run it once and check the result           memory recorded as such), never a crash
//     warm the GPU up (once, before the first timing); let the point tune
//     time each unit under the timing policy, telemetry sampled throughout
//     let the point write its record; flush the file to disk; print its progress line
//   then the benchmark's closing records (summaries), and the count of points measured, wrong
//   (failed their check), failed and out of memory.
//
// Whatever a benchmark records goes through DeviceRun::emit, one JSON line at a time, so an
// interrupted run keeps every point it finished.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "gpu/timing.hpp"
#include "measure/device_run.hpp"
#include "records/point_counts.hpp"
#include "records/telemetry.hpp"
#include "records/timing_policy.hpp"

namespace ub::measure {

// One unit of timed work of a point: what runs per sample, and an untimed preparation before
// each sample (an L2 flush, a re-randomised output). The benchmark's policy applies unless the
// unit names its own (a training run's fixed count of steps).
struct TimedUnit {
  std::string name;  // "fwd", "fwd_bwd", ... ("" for a point's only unit)
  gpu::Work work;
  gpu::Work prepare;
  std::optional<TimingPolicy> policy;
  // Telemetry per sample instead of over the whole point (a training step each).
  bool telemetry_per_sample = false;
};

// What the driver measured of one point.
struct Measured {
  std::vector<gpu::Timing> timings;  // one per unit, in order (empty when the check failed)
  TelemetrySummary telemetry;        // over all units
  std::string error;                 // the check's failure: nothing was timed
  double elapsed_s = 0;              // from preparing the point to its record
  bool interrupted = false;
};

// A point prepared on the device: memory allocated, inputs filled.
class Point {
 public:
  virtual ~Point() = default;
  // Runs the work once and checks the result against its reference; what is wrong, or nullopt.
  [[nodiscard]] virtual std::optional<std::string> check() = 0;
  // After the check and the warm-up, before timing: choose among candidate algorithms by timing
  // each (autotuning that is part of the benchmark, as mamf-finder.py's per-shape search).
  virtual void tune(const std::atomic<bool>* /*interrupted*/) {}
  virtual std::vector<TimedUnit> units() = 0;
  // After each sample of unit `unit` (telemetry only for a unit that asks for it per sample).
  virtual void sampled(size_t /*unit*/, int /*index*/, double /*ms*/, const TelemetrySummary* /*telemetry*/) {}
  // Writes the point's record(s) (through run.emit) and returns its progress line ("": none).
  virtual std::string record(const Measured& m) = 0;
};

class Benchmark {
 public:
  explicit Benchmark(const BenchmarkTiming& timing) : timing_(timing) {}
  virtual ~Benchmark() = default;
  Benchmark(const Benchmark&) = delete;
  Benchmark& operator=(const Benchmark&) = delete;

  // Moves to the next point; false when there is none.
  virtual bool next() = 0;
  virtual std::string label() const = 0;  // the current point, for progress ("seqlen 8192")
  // Prepares the current point on `stream`; may throw (out of memory is a failed point).
  virtual std::unique_ptr<Point> prepare(cudaStream_t stream) = 0;
  // Records that the current point could not be measured (`error` what was thrown, out of
  // memory or not); returns its progress line.
  virtual std::string failed(const WorkError& error, bool out_of_memory) = 0;
  // Before the first timing: by default the first unit of `first` runs for warmup_s seconds.
  virtual void warm_up(Point& first, cudaStream_t stream);
  // After the last point: closing records (summaries).
  virtual void finish() {}

  const BenchmarkTiming& timing() const { return timing_; }

 private:
  BenchmarkTiming timing_;
};

// Runs `b` on the run's device; what its points came to.
PointCounts run_benchmark(Benchmark& b, DeviceRun& run);

}  // namespace ub::measure
