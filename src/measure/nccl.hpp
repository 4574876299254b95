// The collective benchmark: one point per collective, dtype, size and in-place or not, on every
// rank of the job at once (one NcclBenchmark per rank, the same points in the same order). A point
// is checked before it is timed: inputs crafted so the exact output is known
// (gpu/kernels/collective_check.cuh), the receive buffer poisoned first, the wrong elements of
// every rank summed; one wrong element fails the point. Its timed unit is `calls_per_sample`
// collectives back to back; the ranks agree when to stop sampling; the record carries the slowest
// rank's time per call and algbw / busbw by nccl-tests' definitions (facts/collectives.hpp).
// Rank 0 writes the records. A failure on any rank ends the job (the communicator cannot go on).
#pragma once

#include <memory>
#include <vector>

#include "measure/driver.hpp"
#include "records/nccl_records.hpp"

namespace ub::gpu {
class DeviceBuffer;
class NcclComm;
}  // namespace ub::gpu

namespace ub::measure {

class NcclBenchmark : public Benchmark {
 public:
  NcclBenchmark(const NcclConfig& config, DeviceRun& run, gpu::NcclComm& comm);
  ~NcclBenchmark() override;

  bool next() override;
  std::string label() const override;
  std::unique_ptr<Point> prepare(cudaStream_t stream) override;
  std::string failed(const WorkError& error, bool out_of_memory) override;

  const std::vector<NcclRecord>& results() const { return results_; }

 private:
  friend class NcclPoint;
  struct Current {
    Collective collective;
    Dtype dtype;
    int64_t bytes;
    bool in_place;
  };
  NcclRecord record_of(const Current& c) const;

  NcclConfig cfg_;
  DeviceRun& run_;
  gpu::NcclComm& comm_;
  std::vector<Current> points_;
  size_t index_ = 0;
  bool started_ = false;
  std::unique_ptr<gpu::DeviceBuffer> send_, recv_, wrong_;
  std::vector<NcclRecord> results_;
};

}  // namespace ub::measure
