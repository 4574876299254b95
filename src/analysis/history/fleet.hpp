// One benchmark across the GPUs of one model: each GPU's figure against the fleet's median, and
// the cards that stand out, with what their telemetry says about why (the ml-engineering guide's
// warning: GPUs of one model differ, one slow or throttling card slows a whole job).
//
// A GPU is identified by its UUID (by host and index where the log gives none); its figure pools
// its runs' (figure_interval.hpp). The fleet's median is the median of the GPUs' figures with the
// order-statistics interval of a median (base/statistics.hpp). A GPU is slow when its whole
// interval lies beyond `tolerance` (a fraction) on the worse side of the fleet's median, fast when
// beyond it on the better side. For a flagged GPU the telemetry is read: clocks-event reasons of
// throttling, an SM clock below the fleet's median clock, a temperature above the fleet's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/history/figure_interval.hpp"
#include "analysis/history/run_metrics.hpp"

namespace ub {

struct FleetSample {
  int64_t run_id = 0;
  std::string date, host, gpu_name, uuid;
  std::string workload;  // workload.hpp
  int gpu_index = 0;
  MetricPoint point;
  std::map<std::string, std::string> stack;  // component -> version, as the run recorded it
};

enum class FleetStatus { typical, slow, fast };

struct FleetGpu {
  std::string id, name, host;
  std::vector<int64_t> run_ids;
  Estimate figure;
  double deviation = 0;  // figure.median / fleet median - 1
  std::optional<double> sm_clock_mhz, power_w, temperature_c;
  uint64_t throttle = 0;
  FleetStatus status = FleetStatus::typical;
  std::string why;  // for a flagged GPU: what the telemetry shows ("" when it shows nothing)
};

struct Fleet {
  std::string metric, unit;
  std::string gpu_model, workload;  // the series: one GPU model, one workload
  double x = 0, tolerance = 0.03;
  bool higher_is_better = true;
  Estimate median;                       // of the GPUs' figures
  std::optional<double> median_clock;  // of the GPUs' SM clocks, where known
  std::vector<FleetGpu> gpus;          // worst first
  size_t unplaced = 0;  // GPUs of logs that name neither UUID nor host: one per run and index
  // Stack components its runs recorded at more than one version: "torch 2.10.0, 2.11.0".
  std::vector<std::string> stack_spread;
};

Fleet fleet_of(const std::string& metric, double x, double tolerance, const std::vector<FleetSample>& samples);

// One fleet per series: the samples of one GPU model and one workload (workload.hpp), so a B200 is
// never a fast H200 nor a 32-layer job a slow card. The fleet of the most GPUs first.
std::vector<Fleet> fleets_of(const std::string& metric, double x, double tolerance, const std::vector<FleetSample>& samples);
std::string_view to_string(FleetStatus s);

}  // namespace ub
