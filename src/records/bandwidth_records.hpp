// The records of `bandwidth` (HBM copy / read / write): the configuration and one `bandwidth`
// record per operation and size. GB/s counts bytes read plus bytes written (a copy of B bytes
// moves 2B).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "records/fields.hpp"

#include "records/timing_policy.hpp"
#include "records/timing_record.hpp"

namespace ub {

struct BandwidthConfig {
  std::vector<int64_t> sizes;  // bytes per buffer
  std::vector<std::string> ops = {"copy", "read", "write"};
  std::string kernel = "tiled8cs";  // a launch shape of gpu/kernels/bandwidth.cuh (the fastest copy measured)
  BenchmarkTiming timing{2, {20, 500, 0.0, 1.0, 0.005, 10, 0}};
  // UsageError for an unknown operation or a size out of range.
  void validate() const;
};

// Bytes an operation moves over a buffer of `bytes` (read plus written).
double bytes_moved(const std::string& op, int64_t bytes);

struct BandwidthRecord {
  int device = 0;
  std::string op, kernel;
  int64_t bytes = 0;  // per buffer
  bool in_l2 = false;
  bool ok = false;
  std::string error;  // why the check failed (nothing is timed then)
  double median_gbps = 0, mean_gbps = 0, max_gbps = 0;
  std::optional<TimeStats> time;
  TelemetrySummary telemetry;

  double moved() const { return bytes_moved(op, bytes); }
};

void to_json(nlohmann::json& j, const BandwidthConfig& c);
void to_json(nlohmann::json& j, const BandwidthRecord& r);
// A `bandwidth` record as written (errors name the file, line and field).
BandwidthRecord read_bandwidth_record(const Fields& f);

}  // namespace ub
