// The view of `bandwidth` records; see measurement_views.hpp.
#include <fmt/format.h>

#include "base/units.hpp"
#include "report/format.hpp"
#include "report/measurement_views.hpp"

namespace ub::report {

namespace {

std::string size_text(int64_t bytes) {
  return bytes >= (1 << 30) ? fmt::format("{} GiB", bytes >> 30) : fmt::format("{} MiB", bytes >> 20);
}

}  // namespace

View bandwidth_view(const std::vector<OnGpu<std::vector<BandwidthRecord>>>& runs, const Catalog& catalog) {
  View v;
  for (const auto& [device, gpu, points] : runs) {
    const Accelerator* a = catalog.try_find(gpu);
    const std::optional<double> spec =
        a && a->bandwidth_tbps.known() ? std::optional<double>(a->bandwidth_tbps.value * 1000) : std::nullopt;
    auto& b = v.doc.add(fmt::format("GPU {}: {} (catalog {} GB/s)", device, gpu, num(spec, 0)));
    b.table.columns = {{"op", Align::left}, {"size"}, {"GB/s median"}, {"GB/s mean"},
                       {"GB/s max"}, {"of spec"}, {"note", Align::left}};
    for (const BandwidthRecord& p : points) {
      // A buffer that fits in L2 measures the cache, not HBM: no fraction of the HBM figure.
      const std::optional<double> frac =
          p.ok && !p.in_l2 ? fraction_of(p.median_gbps, spec) : std::nullopt;
      b.table.add_row({p.op, size_text(p.bytes), p.ok ? num(p.median_gbps) : "-", p.ok ? num(p.mean_gbps) : "-",
                       p.ok ? num(p.max_gbps) : "-", percent(frac), p.ok ? (p.in_l2 ? "in L2" : "") : p.error});
      v.json.push_back({{"device", p.device}, {"op", p.op}, {"bytes", p.bytes}, {"ok", p.ok},
                        {"median_gbps", p.median_gbps}, {"mean_gbps", p.mean_gbps}, {"max_gbps", p.max_gbps},
                        {"in_l2", p.in_l2}, {"fraction_of_spec", or_null(frac)}, {"record", p}});
    }
    b.notes.push_back("GB/s counts bytes read plus bytes written (a copy of B bytes moves 2B). "
                      "Each kernel's result was checked before it was timed.");
  }
  return v;
}

}  // namespace ub::report
