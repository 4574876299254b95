// Tables and charts of collective benchmarks; see nccl_views.hpp.
#include "report/nccl_views.hpp"

#include <fmt/format.h>

#include <map>

#include "base/text.hpp"
#include "facts/collectives.hpp"
#include "report/format.hpp"

namespace ub::report {

namespace {

// "all_reduce bf16 out": one line of a chart.
std::string series_name(const NcclPointKey& k) {
  return fmt::format("{} {} {}", to_string(k.collective), k.dtype, k.in_place ? "in place" : "out of place");
}

std::string run_line(const char* which, const std::string& path, const std::string& gpu, const std::string& source,
                     int world, const std::map<std::string, std::string>& details) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : details) parts.push_back(fmt::format("{} {}", k, v));
  return fmt::format("{}: {} ({}, {}, {} ranks{}{})", which, path, gpu.empty() ? "GPU not named" : gpu, source, world,
                     parts.empty() ? "" : "; ", fmt::join(parts, "; "));
}

std::vector<Series> series_by_point(const std::vector<std::pair<NcclPointKey, double>>& points, const std::string& suffix) {
  std::map<std::string, Series> by;
  std::vector<std::string> order;
  for (const auto& [k, y] : points) {
    const std::string name = series_name(k) + suffix;
    if (!by.count(name)) {
      order.push_back(name);
      by[name].name = name;
    }
    by[name].points.emplace_back(static_cast<double>(k.bytes), y);
  }
  std::vector<Series> out;
  for (const std::string& n : order) out.push_back(by[n]);
  return out;
}

const char* kMethod =
    "busbw = algbw x 2(n-1)/n for all_reduce, x (n-1)/n for all_gather, reduce_scatter and alltoall, x 1 otherwise "
    "(nccl-tests' definitions, docs/nccl.md); of spec = busbw over one direction of the catalog's interconnect.";

}  // namespace

Document nccl_comparison_document(const NcclComparison& c) {
  Document doc;
  auto& b = doc.add(fmt::format("Collectives: {} -> {}", c.old_gpu.empty() ? "?" : c.old_gpu,
                                c.new_gpu.empty() ? "?" : c.new_gpu));
  b.notes.push_back(run_line("old", c.old_path, c.old_gpu, c.old_source, c.old_world, c.old_details));
  b.notes.push_back(run_line("new", c.new_path, c.new_gpu, c.new_source, c.new_world, c.new_details));
  b.notes.push_back(c.interconnect_ratio
                        ? fmt::format("Interconnect ratio from the catalog (new/old): {}.", ratio(c.interconnect_ratio))
                        : std::string("Interconnect ratio: N/A (a GPU not named or not in the catalog)."));
  b.table.columns = {{"collective", Align::left}, {"dtype", Align::left}, {"place", Align::left}, {"size"},
                     {"old us"}, {"new us"}, {"speedup"}, {"95% interval"}, {"verdict", Align::left},
                     {"old busbw"}, {"new busbw"}, {"old of spec"}, {"new of spec"}};
  bool bare = false;
  for (const NcclComparisonRow& r : c.rows) {
    bare = bare || (r.ratio && !r.speedup);
    b.table.add_row({std::string(to_string(r.key.collective)), r.key.dtype, r.key.in_place ? "in" : "out",
                     binary_size_text(r.key.bytes), num(r.old_side.time_us, 2), num(r.new_side.time_us, 2),
                     ratio(r.ratio),
                     r.speedup ? fmt::format("{:.3f}-{:.3f}", r.speedup->low, r.speedup->high) : "-",
                     r.speedup ? std::string(to_string(r.speedup->verdict)) : (r.ratio ? "one figure" : "-"),
                     num(r.old_side.busbw_gbps), num(r.new_side.busbw_gbps), percent(r.old_side.of_spec),
                     percent(r.new_side.of_spec)});
  }
  b.notes.push_back("Speedup = old time per call / new time per call (median of the slowest rank), with the 95% "
                    "interval of the medians; verdict SAME within 2%, AMBIGUOUS when wider and containing 1.");
  if (bare) b.notes.push_back("\"one figure\": a side holds one time per point (a peer's window), so that ratio has no interval.");
  b.notes.push_back(kMethod);
  if (!c.warnings.empty()) {
    auto& w = doc.add("Warnings");
    w.notes = c.warnings;
    w.bulleted = true;
  }
  return doc;
}

ReportContent nccl_run_report(const NcclLog& log, const Catalog& catalog) {
  ReportContent r;
  r.title = fmt::format("{}: collectives on {} ranks", log.gpu.empty() ? "?" : log.gpu, log.world_size);
  const Accelerator* gpu = log.gpu.empty() ? nullptr : catalog.try_find(log.gpu);
  const double spec = gpu ? busbw_spec_gbps(*gpu).value_or(0) : 0;  // 0: unknown
  auto& b = r.body.add(run_line("run", log.path, log.gpu, log.source, log.world_size, log.details));
  b.table.columns = {{"collective", Align::left}, {"dtype", Align::left}, {"place", Align::left}, {"size"},
                     {"time us"}, {"95% interval"}, {"algbw GB/s"}, {"busbw GB/s"}, {"of spec"}};
  std::vector<std::pair<NcclPointKey, double>> busbw, latency;
  for (const NcclPoint& p : log.points) {
    const NcclRecord& rec = p.record;
    const std::optional<double> of_spec =
        spec > 0 && rec.world_size > 1 ? std::optional<double>(rec.busbw_gbps / spec) : std::nullopt;
    b.table.add_row({std::string(to_string(rec.collective)), rec.dtype, rec.in_place ? "in" : "out",
                     binary_size_text(rec.bytes), num(p.time_us, 2),
                     p.has_samples() ? fmt::format("{:.1f}-{:.1f}", rec.time->ms.median_low * 1e3, rec.time->ms.median_high * 1e3) : "-",
                     num(rec.algbw_gbps), num(rec.busbw_gbps), percent(of_spec)});
    busbw.emplace_back(key_of(rec), rec.busbw_gbps);
    latency.emplace_back(key_of(rec), p.time_us);
  }
  b.notes.push_back(kMethod);
  Chart bw{"busbw", "Bus bandwidth by size", "size (bytes)", "busbw GB/s", true, series_by_point(busbw, ""), {}, {}};
  if (spec > 0) bw.lines.push_back({fmt::format("{} spec, one direction", gpu->id), spec});
  Chart lat{"latency", "Time per call by size", "size (bytes)", "microseconds", true, series_by_point(latency, ""), {}, {}};
  r.charts = {bw, lat};
  if (!log.warnings.empty()) {
    auto& w = r.body.add("Warnings");
    w.notes = log.warnings;
    w.bulleted = true;
  }
  return r;
}

ReportContent nccl_comparison_report(const NcclComparison& c) {
  ReportContent r;
  r.title = fmt::format("{} vs {}: collectives", c.old_gpu.empty() ? "?" : c.old_gpu, c.new_gpu.empty() ? "?" : c.new_gpu);
  r.body = nccl_comparison_document(c);
  std::vector<std::pair<NcclPointKey, double>> old_bw, new_bw, speed;
  for (const NcclComparisonRow& row : c.rows) {
    if (row.old_side.busbw_gbps) old_bw.emplace_back(row.key, *row.old_side.busbw_gbps);
    if (row.new_side.busbw_gbps) new_bw.emplace_back(row.key, *row.new_side.busbw_gbps);
    if (row.ratio) speed.emplace_back(row.key, *row.ratio);
  }
  Chart bw{"busbw", "Bus bandwidth by size", "size (bytes)", "busbw GB/s", true, series_by_point(old_bw, " (old)"), {}, {}};
  for (Series& s : series_by_point(new_bw, " (new)")) bw.series.push_back(std::move(s));
  Chart sp{"speedup", "Speedup new/old by size", "size (bytes)", "speedup (x)", true, series_by_point(speed, ""),
           {{"parity", 1.0}}, {}};
  if (c.interconnect_ratio) sp.lines.push_back({fmt::format("interconnect ratio {:.2f}x", *c.interconnect_ratio), *c.interconnect_ratio});
  r.charts = {bw, sp};
  return r;
}

}  // namespace ub::report
