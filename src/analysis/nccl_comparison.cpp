// Two collective benchmarks point by point; see nccl_comparison.hpp.
#include "analysis/nccl_comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/log_comparisons.hpp"
#include "base/error.hpp"
#include "base/text.hpp"
#include "facts/collectives.hpp"
#include "records/fields.hpp"

namespace ub {

using nlohmann::json;

namespace {

const NcclPoint* find(const NcclLog& log, const NcclPointKey& k) {
  const auto it = std::find_if(log.points.begin(), log.points.end(),
                               [&](const NcclPoint& p) { return key_of(p.record) == k; });
  return it == log.points.end() ? nullptr : &*it;
}

NcclSide side_of(const NcclPoint* p, const Accelerator* gpu) {
  NcclSide s;
  if (!p) return s;
  s.time_us = p->time_us;
  s.busbw_gbps = p->record.busbw_gbps;
  const std::optional<double> spec = gpu ? busbw_spec_gbps(*gpu) : std::nullopt;
  if (spec && p->record.world_size > 1) s.of_spec = p->record.busbw_gbps / *spec;
  return s;
}

}  // namespace

NcclComparison compare_nccl(const NcclLog& o, const NcclLog& n, const Catalog& catalog) {
  NcclComparison c;
  c.old_path = o.path;
  c.new_path = n.path;
  c.warnings = provenance_lines(o.path, o.provenance, n.path, n.provenance);
  c.old_gpu = o.gpu;
  c.new_gpu = n.gpu;
  c.old_source = o.source;
  c.new_source = n.source;
  c.old_world = o.world_size;
  c.new_world = n.world_size;
  c.old_details = o.details;
  c.new_details = n.details;
  const Accelerator* og = o.gpu.empty() ? nullptr : catalog.try_find(o.gpu);
  const Accelerator* ng = n.gpu.empty() ? nullptr : catalog.try_find(n.gpu);
  if (og && ng && og->interconnect_gbps.known() && ng->interconnect_gbps.known() && og->interconnect_gbps.value > 0) {
    c.interconnect_ratio = ng->interconnect_gbps.value / og->interconnect_gbps.value;
  }
  std::vector<NcclPointKey> keys;
  for (const NcclLog* log : {&o, &n}) {
    for (const NcclPoint& p : log->points) keys.push_back(key_of(p.record));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (const NcclPointKey& k : keys) {
    const NcclPoint* a = find(o, k);
    const NcclPoint* b = find(n, k);
    NcclComparisonRow row{k, side_of(a, og), side_of(b, ng), std::nullopt, std::nullopt};
    // Jobs of different sizes: a time is of its own job, busbw (bytes x the collective's bus
    // factor over the time) is the links'. The row then compares busbw: the time ratio scaled
    // by the factors' ratio, its interval and verdict alike; a job of one rank moves no bytes
    // over links, so it has none.
    const double scale = o.world_size == n.world_size
                             ? 1.0
                             : bus_factor(k.collective, n.world_size) / bus_factor(k.collective, o.world_size);
    if (a && b && a->time_us > 0 && b->time_us > 0 && std::isfinite(scale) && scale > 0) {
      row.ratio = scale * a->time_us / b->time_us;
      if (a->has_samples() && b->has_samples()) {
        Speedup sp = speedup_of(a->record.time->ms, b->record.time->ms);
        if (scale != 1.0 && sp.verdict != Verdict::few_samples) {
          sp = speedup_in(scale * sp.ratio, scale * sp.low, scale * sp.high);
        } else if (scale != 1.0) {
          sp.ratio *= scale, sp.low *= scale, sp.high *= scale;
        }
        row.speedup = sp;
      }
    }
    c.rows.push_back(row);
  }
  // Two runs of no point in common (other collectives, dtypes or sizes) compare nothing.
  if (!o.points.empty() && !n.points.empty() &&
      std::none_of(keys.begin(), keys.end(), [&](const NcclPointKey& k) { return find(o, k) && find(n, k); })) {
    throw UsageError(fmt::format("{} and {} measured no collective, dtype and size in common: measure one set on both",
                                 printable(o.path), printable(n.path)));
  }
  if (o.world_size != n.world_size) {
    c.busbw_ratio = true;
    c.warnings.push_back(fmt::format("{} ranks (old) against {} (new): the times are of different jobs, so each speedup "
                                     "is busbw's (new / old: the links'), its interval and verdict too{}",
                                     o.world_size, n.world_size,
                                     std::min(o.world_size, n.world_size) <= 1 ? "; a job of one rank moves nothing over "
                                                                                 "links: no speedup"
                                                                               : ""));
  }
  for (const NcclLog* log : {&o, &n}) {
    for (const std::string& w : log->warnings) c.warnings.push_back(fmt::format("{}: {}", log->path, w));
  }
  return c;
}

void to_json(json& j, const NcclComparison& c) {
  auto side = [](const NcclSide& s) {
    return json{{"time_us", or_null(s.time_us)}, {"busbw_gbps", or_null(s.busbw_gbps)}, {"fraction_of_spec", or_null(s.of_spec)}};
  };
  json rows = json::array();
  for (const NcclComparisonRow& r : c.rows) {
    json row = {{"collective", to_string(r.key.collective)}, {"dtype", r.key.dtype}, {"bytes", r.key.bytes},
                {"in_place", r.key.in_place}, {"old", side(r.old_side)}, {"new", side(r.new_side)},
                {"speedup", or_null(r.ratio)}};
    if (r.speedup) {
      row["speedup_low"] = r.speedup->low;
      row["speedup_high"] = r.speedup->high;
      row["verdict"] = to_string(r.speedup->verdict);
    }
    rows.push_back(row);
  }
  j = {{"kind", "nccl"}, {"old", {{"path", c.old_path}, {"gpu", c.old_gpu}, {"source", c.old_source},
                                  {"world_size", c.old_world}, {"details", c.old_details}}},
       {"new", {{"path", c.new_path}, {"gpu", c.new_gpu}, {"source", c.new_source}, {"world_size", c.new_world},
                {"details", c.new_details}}},
       {"interconnect_ratio", or_null(c.interconnect_ratio)}, {"speedup_of", c.busbw_ratio ? "busbw" : "time"},
       {"rows", rows}, {"warnings", c.warnings}};
}

}  // namespace ub
