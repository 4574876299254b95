// The figures a history keeps of one run, so trends and fleets are queries and not re-reads: per
// GPU of the run and per point (a sequence length, a message size), the figure's median and 95%
// interval over its samples and the telemetry sampled while it ran. docs/history.md lists the
// metric names; each reader's structure (records/readers) maps to them here, once.
//
// Intervals: a figure inversely proportional to a time (TFLOPS, GB/s) takes the time's median
// interval inverted (flop / t_high .. flop / t_low); a figure of many steps (a training step's
// TFLOPS) takes the order-statistics interval of their median (base/statistics.hpp); a figure
// printed once (mamf-finder.py's best) has no interval (low = median = high, n = 1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/statistics.hpp"
#include "records/bandwidth_records.hpp"
#include "records/readers/attention_log.hpp"
#include "records/readers/decomposition_log.hpp"
#include "records/readers/mamf_log.hpp"
#include "records/readers/nccl_log.hpp"
#include "records/run_log.hpp"
#include "records/telemetry.hpp"

namespace ub {

struct MetricPoint {
  std::string metric;  // "train.tflops", "mamf.tflops.bf16", "nccl.busbw.all_reduce.bf16", ...
  double x = 0;        // the point: sequence length, bytes per buffer or message; 0 where none
  int gpu = 0;         // index of the GPU in the run (its context's list)
  size_t n = 1;        // samples behind the figure
  double median = 0, low = 0, high = 0;
  // While it ran, where NVML was read: mean SM clock, mean power, hottest temperature, and the
  // clocks-event reasons seen (records/telemetry.hpp's bits).
  std::optional<double> sm_clock_mhz, power_w, temperature_c;
  uint64_t throttle = 0;
  // Every figure behind it, to tell one measurement from another (stored_run.hpp's
  // one_measurement); not columns of the history database, whose kept lines give them again. A
  // training point's steady steps, (its number as logged, its time); a timed record's time
  // summary (n, mean, stddev, min, max, q1, median, q3, the median's interval). Both empty where
  // a figure was printed once.
  std::vector<std::pair<int64_t, double>> steps;
  std::vector<double> summary;
};

// Whether a larger value of `metric` is better (TFLOPS, GB/s) or worse (milliseconds).
bool higher_is_better(const std::string& metric);
// The unit of `metric` ("TFLOPS", "GB/s", "ms").
std::string metric_unit(const std::string& metric);

std::vector<MetricPoint> training_metrics(const RunLog& run);
std::vector<MetricPoint> mamf_metrics(const MamfLog& log);
std::vector<MetricPoint> attention_metrics(const AttentionLog& log);
std::vector<MetricPoint> nccl_metrics(const NcclLog& log);
// Our records: each GPU's under its index, a job's ranks under their rank; a second decomposition
// of one index (traces named one by one, each GPU 0) is left out, and said in `warnings`.
std::vector<MetricPoint> decomposition_metrics(const DecompositionLog& log, std::vector<std::string>& warnings);
std::vector<MetricPoint> bandwidth_metrics(const std::vector<BandwidthRecord>& records);

}  // namespace ub
