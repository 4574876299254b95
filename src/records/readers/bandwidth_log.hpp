// A bandwidth run as `compare`, `report` and `decide` read it: our `bandwidth` records (a context
// record naming the GPU, then one record per operation and size); the first GPU's points when
// several GPUs were measured at once. Errors name the file and line.
#pragma once

#include <string>
#include <vector>

#include "base/line_source.hpp"
#include "records/bandwidth_records.hpp"
#include "records/provenance.hpp"

namespace ub {

struct BandwidthLog {
  std::string path, gpu;
  std::vector<BandwidthRecord> points;  // in the file's order
  std::vector<std::string> warnings;
  Provenance provenance;  // what the numbers are (records/provenance.hpp)

  // The best median GB/s of `op` over the sizes that do not fit in L2 (what HBM does), or none.
  std::optional<double> hbm_gbps(const std::string& op) const;
};

BandwidthLog read_bandwidth_log(const LineSource& t);

}  // namespace ub
