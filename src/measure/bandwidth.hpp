// HBM bandwidth: copy, read and write kernels (16-byte accesses) over sizes from inside L2 to
// several GiB, each validated before it is timed (gpu/kernels/bandwidth.cuh says how). GB/s
// counts bytes read plus bytes written (a copy of B bytes moves 2B), as the peer's figure does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/device_run.hpp"

namespace ub::measure {

struct BandwidthConfig {
  std::vector<int64_t> sizes;  // bytes per buffer
  std::vector<std::string> ops = {"copy", "read", "write"};
  std::string kernel = "tiled8cs";  // a launch shape of gpu/kernels/bandwidth.cuh (the fastest copy measured)
  double warmup_s = 2;
  int min_samples = 20, max_samples = 500;
  double max_seconds = 1.0;
  double target_noise = 0.005;
  nlohmann::json to_json() const;
};

struct BandwidthPoint {
  std::string op;
  int64_t bytes = 0;
  double bytes_moved = 0;
  double median_gbps = 0, mean_gbps = 0, max_gbps = 0;
  bool in_l2 = false;
  bool ok = false;
  std::string error;
};

std::vector<BandwidthPoint> run_bandwidth(const BandwidthConfig& config, DeviceRun& run);

}  // namespace ub::measure
