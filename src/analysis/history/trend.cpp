// Grouping a metric's runs by version or date; see trend.hpp.
#include "analysis/history/trend.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "analysis/history/run_metrics.hpp"

namespace ub {

bool version_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      // Without leading zeros, the longer number is the larger.
      const std::string x = a.substr(i, ie - i), y = b.substr(j, je - j);
      const std::string xs = x.substr(std::min(x.find_first_not_of('0'), x.size()));
      const std::string ys = y.substr(std::min(y.find_first_not_of('0'), y.size()));
      if (xs.size() != ys.size()) return xs.size() < ys.size();
      if (xs != ys) return xs < ys;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

Trend trend_of(const std::string& metric, double x, const std::string& by, std::vector<TrendRun> runs) {
  Trend t;
  t.metric = metric;
  t.unit = metric_unit(metric);
  t.by = by;
  t.x = x;
  t.higher_is_better = higher_is_better(metric);
  std::stable_sort(runs.begin(), runs.end(), [](const TrendRun& a, const TrendRun& b) {
    return a.date != b.date ? a.date < b.date : a.run_id < b.run_id;
  });
  t.runs = std::move(runs);
  // A group pools its members' figures; the GPUs of one run (adjacent in date order) are one run
  // of it, never two groups: their difference is no change over time.
  const auto group_of = [](std::string label, const std::vector<const TrendRun*>& members) {
    TrendGroup g{std::move(label), {}, members.front()->date, {}};
    std::vector<Estimate> figures;
    for (const TrendRun* r : members) {
      if (std::find(g.run_ids.begin(), g.run_ids.end(), r->run_id) == g.run_ids.end()) g.run_ids.push_back(r->run_id);
      figures.push_back(r->figure);
    }
    g.figure = pooled(figures);
    return g;
  };
  if (by.empty()) {
    // Over time, one group per run: a run whose log prints no date has no place in it.
    for (size_t i = 0; i < t.runs.size();) {
      std::vector<const TrendRun*> members;
      for (const int64_t id = t.runs[i].run_id; i < t.runs.size() && t.runs[i].run_id == id; ++i) members.push_back(&t.runs[i]);
      if (members.front()->date.empty()) ++t.undated;
      else t.groups.push_back(group_of(members.front()->date, members));
    }
  } else {
    std::map<std::string, std::vector<const TrendRun*>> by_version;
    for (const TrendRun& r : t.runs) by_version[r.version.empty() ? "unknown" : r.version].push_back(&r);
    for (const auto& [version, members] : by_version) t.groups.push_back(group_of(version, members));
    std::stable_sort(t.groups.begin(), t.groups.end(),
                     [](const TrendGroup& a, const TrendGroup& b) { return version_less(a.label, b.label); });
  }
  for (size_t i = 1; i < t.groups.size(); ++i) {
    t.steps.push_back({t.groups[i - 1].label, t.groups[i].label, change_between(t.groups[i - 1].figure, t.groups[i].figure)});
  }
  if (t.groups.size() > 2) {
    t.overall = TrendStep{t.groups.front().label, t.groups.back().label,
                          change_between(t.groups.front().figure, t.groups.back().figure)};
  }
  return t;
}

std::vector<Trend> trends_of(const std::string& metric, double x, const std::string& by, const std::vector<TrendRun>& runs) {
  std::map<std::pair<std::string, std::string>, std::vector<TrendRun>> series;
  for (const TrendRun& r : runs) series[{r.gpu, r.workload}].push_back(r);
  std::vector<Trend> out;
  for (auto& [key, members] : series) {
    Trend t = trend_of(metric, x, by, std::move(members));
    t.gpu = key.first, t.workload = key.second;
    out.push_back(std::move(t));
  }
  std::stable_sort(out.begin(), out.end(), [](const Trend& a, const Trend& b) { return a.runs.size() > b.runs.size(); });
  return out;
}

}  // namespace ub
