// One metric over time and over a stack component's versions, from the runs a history holds:
// the question the ml-engineering guide answered by re-running one H200 under torch 2.10.0 to
// 2.13.0 (+16% from 2.11.0 to 2.12.0 alone). Plain data in, plain data out: the database query
// is history/, the printing report/.
//
// Grouping: with a component (`by`, e.g. torch), the runs are grouped by its version, in version
// order (2.9.0 before 2.10.0); without one, each run is its own group (its GPUs pooled), in date order. Each group's
// figure pools its runs' (figure_interval.hpp); each step is the change from one group to the
// next, and `overall` the change from the first to the last. Only runs of one series are grouped
// (trends_of).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/history/figure_interval.hpp"

namespace ub {

struct TrendRun {
  int64_t run_id = 0;
  std::string date, version, gpu, host;  // version: of the `by` component, "" where the run lacks it
  Estimate figure;
  std::string workload;       // workload.hpp
  bool example_data = false;  // the run's file says it is not measurements
  std::optional<int> gpu_index;  // which of the run's GPUs, where it measured several
};

struct TrendGroup {
  std::string label;  // the version, or the run's date when not grouped
  std::vector<int64_t> run_ids;
  std::string first_date;
  Estimate figure;
};

struct TrendStep {
  std::string from, to;
  Change change;
};

struct Trend {
  std::string metric, unit, by;
  std::string gpu, workload;  // the series: one GPU model, one workload
  double x = 0;
  bool higher_is_better = true;
  std::vector<TrendRun> runs;  // date order
  std::vector<TrendGroup> groups;
  std::vector<TrendStep> steps;
  std::optional<TrendStep> overall;  // first group to last, when there are more than two
  size_t undated = 0;  // runs left out of a trend over time: their logs print no date
};

Trend trend_of(const std::string& metric, double x, const std::string& by, std::vector<TrendRun> runs);

// One trend per series: the runs of one GPU model and one workload (workload.hpp), never pooled
// with another's (a B200's or a 32-layer job's figure is no step of an H200's 4-layer trend). The
// series with the most runs first.
std::vector<Trend> trends_of(const std::string& metric, double x, const std::string& by, const std::vector<TrendRun>& runs);

// Version order: numeric parts compare as numbers ("2.9.0" < "2.10.0"), the rest as text.
bool version_less(const std::string& a, const std::string& b);

}  // namespace ub
