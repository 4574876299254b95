// The HBM bandwidth benchmark: copy, read and write kernels (16-byte accesses) over sizes from
// inside L2 to several GiB, each result checked before it is timed (gpu/kernels/bandwidth.cuh
// says how). A point is one operation at one size; the buffers of a size serve all its
// operations. GB/s counts bytes read plus bytes written (records/bandwidth_records.hpp).
#pragma once

#include <memory>
#include <vector>

#include "measure/driver.hpp"
#include "records/bandwidth_records.hpp"

namespace ub::measure {

class BandwidthBenchmark : public Benchmark {
 public:
  BandwidthBenchmark(const BandwidthConfig& config, DeviceRun& run);
  ~BandwidthBenchmark() override;

  bool next() override;
  std::string label() const override;
  std::unique_ptr<Point> prepare(cudaStream_t stream) override;
  std::string failed(const WorkError& error, bool out_of_memory) override;

  const std::vector<BandwidthRecord>& results() const { return results_; }

 private:
  friend class BandwidthPoint;
  struct Buffers;
  BandwidthRecord current() const;

  BandwidthConfig cfg_;
  DeviceRun& run_;
  size_t size_index_ = 0, op_index_ = 0;
  bool started_ = false;
  std::unique_ptr<Buffers> buffers_;  // of the current size
  std::vector<BandwidthRecord> results_;
};

}  // namespace ub::measure
