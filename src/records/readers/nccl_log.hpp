// A collective benchmark as `compare` and `report` read it: our `nccl` records (a context record
// naming the GPUs, the world and the stack, then one `nccl` record per collective, dtype, size
// and place), or the lines of bench/peers/nccl_peer.py (torch.distributed: one JSON object per
// point with collective, dtype, bytes, world_size, time_us, algbw_gbps, busbw_gbps, and the GPU's
// name where the script wrote it). Our points carry the statistics of their samples; a peer's
// point is one figure. Errors name the file and line; other lines are counted in warnings.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/line_source.hpp"
#include "records/nccl_records.hpp"
#include "records/provenance.hpp"

namespace ub {

struct NcclPoint {
  NcclRecord record;
  double time_us = 0;  // the median of our samples, or the peer's one figure
  bool has_samples() const { return record.time.has_value() && record.time->ms.n > 1; }
};

// What identifies a point across two runs: the world size may differ (busbw is comparable).
struct NcclPointKey {
  Collective collective = Collective::all_reduce;
  std::string dtype;
  bool in_place = false;
  int64_t bytes = 0;
  auto operator<=>(const NcclPointKey&) const = default;
};
NcclPointKey key_of(const NcclRecord& r);

struct NcclLog {
  std::string path, gpu;
  int world_size = 0;
  std::string source;                          // "upgradebench" or "torch.distributed"
  std::map<std::string, std::string> details;  // NCCL version, launcher, topology, torch
  std::vector<NcclPoint> points;               // ordered by collective, dtype, place, size
  std::vector<std::string> warnings;           // failed points, wrong results, ignored lines
  Provenance provenance;                       // what the numbers are (records/provenance.hpp)
};

NcclLog read_nccl_log(const LineSource& t);

}  // namespace ub
