// Tables and charts of collective benchmarks; see nccl_views.hpp.
#include "report/nccl_views.hpp"

#include <fmt/format.h>

#include <map>

#include "base/text.hpp"
#include "facts/collectives.hpp"
#include "report/format.hpp"
#include "report/measurement_views.hpp"

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

View nccl_view(const std::string& title, const std::vector<NcclPoint>& points, const Accelerator* gpu, bool checked) {
  View v;
  const double one_way = gpu ? busbw_spec_gbps(*gpu).value_or(0) : 0;  // 0: unknown
  auto& block = v.doc.add(title);
  block.table.columns = {{"collective", Align::left}, {"dtype", Align::left}, {"size"}, {"place", Align::left},
                         {"time us"}, {"95% interval"}, {"algbw GB/s"}, {"busbw GB/s"}, {"of spec"}, {"#wrong"},
                         {"note", Align::left}};
  for (const NcclPoint& p : points) {
    const NcclRecord& r = p.record;
    const std::optional<double> of_spec =
        r.ok && r.world_size > 1 && one_way > 0 ? std::optional<double>(r.busbw_gbps / one_way) : std::nullopt;
    const std::string interval =
        p.has_samples() ? fmt::format("{:.1f}-{:.1f}", r.time->ms.median_low * 1e3, r.time->ms.median_high * 1e3) : "-";
    block.table.add_row({std::string(to_string(r.collective)), r.dtype, binary_size_text(r.bytes),
                         r.in_place ? "in" : "out", r.ok ? num(p.time_us, 2) : "-", interval,
                         r.ok ? num(r.algbw_gbps, 2) : "-", r.ok ? num(r.busbw_gbps, 2) : "-", percent(of_spec),
                         checked ? std::to_string(r.wrong) : "-", r.ok ? "" : r.error});
    v.json.push_back({{"collective", to_string(r.collective)}, {"dtype", r.dtype}, {"bytes", r.bytes},
                      {"in_place", r.in_place}, {"ok", r.ok}, {"time_us", p.time_us}, {"algbw_gbps", r.algbw_gbps},
                      {"busbw_gbps", r.busbw_gbps}, {"fraction_of_spec", or_null(of_spec)}, {"wrong", r.wrong},
                      {"record", r}});
  }
  block.notes.push_back("Time per call of the slowest rank (median, with its 95% interval); algbw = size / time. " +
                        std::string(kMethod) + (checked ? " Every point was checked exactly before it was timed." : ""));
  if (one_way > 0) {
    block.notes.push_back(fmt::format("Of spec: busbw over one direction of the catalog's {:.0f} GB/s bidirectional "
                                      "interconnect.", 2 * one_way));
  }
  return v;
}

ReportContent nccl_run_report(const NcclLog& log, const Catalog& catalog) {
  ReportContent r;
  r.title = fmt::format("{}: collectives on {} ranks", log.gpu.empty() ? "?" : log.gpu, log.world_size);
  const Accelerator* gpu = log.gpu.empty() ? nullptr : catalog.try_find(log.gpu);
  const double spec = gpu ? busbw_spec_gbps(*gpu).value_or(0) : 0;  // 0: unknown
  r.body = nccl_view(run_line("run", log.path, log.gpu, log.source, log.world_size, log.details), log.points, gpu,
                     log.source == "upgradebench")
               .doc;
  std::vector<std::pair<NcclPointKey, double>> busbw, latency;
  for (const NcclPoint& p : log.points) {
    busbw.emplace_back(key_of(p.record), p.record.busbw_gbps);
    latency.emplace_back(key_of(p.record), p.time_us);
  }
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
