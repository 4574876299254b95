// A benchmark across the GPUs of one model; see fleet.hpp.
#include "analysis/history/fleet.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/statistics.hpp"
#include "records/telemetry.hpp"

namespace ub {

namespace {

std::optional<double> median_of(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  return quantile_sorted(v, 0.5);
}

std::string why_flagged(const FleetGpu& g, const Fleet& f, const std::optional<double>& median_temp) {
  std::vector<std::string> why;
  if (g.throttle & clock_reason::throttling) {
    why.push_back(fmt::format("throttled ({})", fmt::join(clock_reason_names(g.throttle & clock_reason::throttling), ", ")));
  }
  if (g.sm_clock_mhz && f.median_clock && *g.sm_clock_mhz < *f.median_clock * 0.98) {
    why.push_back(fmt::format("SM clock {:.0f} MHz, the fleet's {:.0f}", *g.sm_clock_mhz, *f.median_clock));
  }
  if (g.temperature_c && median_temp && *g.temperature_c > *median_temp + 5) {
    why.push_back(fmt::format("{:.0f} C, the fleet's {:.0f} C", *g.temperature_c, *median_temp));
  }
  return fmt::format("{}", fmt::join(why, "; "));
}

}  // namespace

std::string_view to_string(FleetStatus s) {
  switch (s) {
    case FleetStatus::typical: return "typical";
    case FleetStatus::slow: return "SLOW";
    case FleetStatus::fast: return "fast";
  }
  return "typical";
}

Fleet fleet_of(const std::string& metric, double x, double tolerance, const std::vector<FleetSample>& samples) {
  Fleet f;
  f.metric = metric;
  f.unit = metric_unit(metric);
  f.x = x;
  f.tolerance = tolerance;
  f.higher_is_better = higher_is_better(metric);
  std::map<std::string, std::vector<const FleetSample*>> by_gpu;
  // A GPU is its UUID, else its host and index; a log that names neither says nothing of which
  // card it ran on, so each run's GPUs are their own (pooled as one card, nine runs of six logs
  // were "1 GPU").
  std::set<std::string> unplaced;
  for (const FleetSample& s : samples) {
    std::string id = !s.uuid.empty()   ? s.uuid
                     : !s.host.empty() ? fmt::format("{}/gpu{}", s.host, s.gpu_index)
                                       : fmt::format("run {}/gpu{}", s.run_id, s.gpu_index);
    if (s.uuid.empty() && s.host.empty()) unplaced.insert(id);
    by_gpu[std::move(id)].push_back(&s);
  }
  f.unplaced = unplaced.size();
  std::map<std::string, std::set<std::string>> versions;
  for (const FleetSample& s : samples) {
    for (const auto& [component, version] : s.stack) versions[component].insert(version);
  }
  for (const auto& [component, seen] : versions) {
    if (seen.size() > 1) f.stack_spread.push_back(fmt::format("{} {}", component, fmt::join(seen, ", ")));
  }
  std::vector<double> medians, clocks, temps;
  for (const auto& [id, list] : by_gpu) {
    FleetGpu g;
    g.id = id;
    g.name = list.front()->gpu_name;
    g.host = list.front()->host;
    std::vector<Estimate> figures;
    std::vector<double> gpu_clocks, gpu_power;
    for (const FleetSample* s : list) {
      g.run_ids.push_back(s->run_id);
      figures.push_back({s->point.median, s->point.low, s->point.high, s->point.n});
      if (s->point.sm_clock_mhz) gpu_clocks.push_back(*s->point.sm_clock_mhz);
      if (s->point.power_w) gpu_power.push_back(*s->point.power_w);
      if (s->point.temperature_c) g.temperature_c = std::max(g.temperature_c.value_or(0.0), *s->point.temperature_c);
      g.throttle |= s->point.throttle;
    }
    g.figure = pooled(figures);
    g.sm_clock_mhz = median_of(gpu_clocks);
    g.power_w = median_of(gpu_power);
    medians.push_back(g.figure.median);
    if (g.sm_clock_mhz) clocks.push_back(*g.sm_clock_mhz);
    if (g.temperature_c) temps.push_back(*g.temperature_c);
    f.gpus.push_back(std::move(g));
  }
  if (f.gpus.empty()) return f;
  const Summary s = summarize(medians);
  f.median = {s.median, s.median_low, s.median_high, s.n};
  f.median_clock = median_of(clocks);
  const std::optional<double> median_temp = median_of(temps);
  const double worse_edge = f.higher_is_better ? f.median.median * (1 - tolerance) : f.median.median * (1 + tolerance);
  const double better_edge = f.higher_is_better ? f.median.median * (1 + tolerance) : f.median.median * (1 - tolerance);
  for (FleetGpu& g : f.gpus) {
    g.deviation = g.figure.median / f.median.median - 1;
    const bool worse = f.higher_is_better ? g.figure.high < worse_edge : g.figure.low > worse_edge;
    const bool better = f.higher_is_better ? g.figure.low > better_edge : g.figure.high < better_edge;
    g.status = worse ? FleetStatus::slow : better ? FleetStatus::fast : FleetStatus::typical;
    if (g.status != FleetStatus::typical) g.why = why_flagged(g, f, median_temp);
  }
  // Worst first: the card to look at heads the table.
  std::stable_sort(f.gpus.begin(), f.gpus.end(), [&](const FleetGpu& a, const FleetGpu& b) {
    return f.higher_is_better ? a.deviation < b.deviation : a.deviation > b.deviation;
  });
  return f;
}

std::vector<Fleet> fleets_of(const std::string& metric, double x, double tolerance, const std::vector<FleetSample>& samples) {
  std::map<std::pair<std::string, std::string>, std::vector<FleetSample>> series;
  for (const FleetSample& s : samples) series[{s.gpu_name, s.workload}].push_back(s);
  std::vector<Fleet> out;
  for (const auto& [key, members] : series) {
    Fleet f = fleet_of(metric, x, tolerance, members);
    f.gpu_model = key.first, f.workload = key.second;
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(), [](const Fleet& a, const Fleet& b) { return a.gpus.size() > b.gpus.size(); });
  return out;
}

}  // namespace ub
