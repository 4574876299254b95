// JSON views of the catalog; see catalog_json.hpp.
#include "cli/catalog_json.hpp"

namespace ub::cli {

using nlohmann::json;

json peak_json(const Figure& f) {
  if (f.state == FigureState::unsupported) return "unsupported";
  return figure_json(f);
}

json figure_json(const Figure& f) { return f.known() ? json(f.value) : json(nullptr); }

json optional_json(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

namespace {
json mamf_json(const std::optional<PublishedMamf>& m) {
  if (!m) return nullptr;
  return {{"tflops", figure_json(m->tflops)}, {"shape", m->shape}, {"software", m->software},
          {"source", m->tflops.source}};
}
}  // namespace

json accelerator_json(const Accelerator& a) {
  json peaks = json::object();
  for (const auto& [d, f] : a.peak_tflops) peaks[std::string(to_string(d))] = peak_json(f);
  return {{"id", a.id},
          {"name", a.name},
          {"vendor", a.vendor},
          {"architecture", a.architecture},
          {"compute_capability", a.compute_capability ? json(*a.compute_capability) : json()},
          {"status", a.status},
          {"aliases", a.aliases},
          {"peak_tflops", peaks},
          {"memory_gb", figure_json(a.memory_gb)},
          {"memory_type", a.memory_type},
          {"device_total_gib", figure_json(a.device_total_gib)},
          {"capacity_gib", a.capacity_gib() ? json(*a.capacity_gib()) : json()},
          {"capacity_basis", a.capacity_basis()},
          {"bandwidth_tbps", figure_json(a.bandwidth_tbps)},
          {"power_w", figure_json(a.power_w)},
          {"sm_count", figure_json(a.sm_count)},
          {"max_sm_clock_mhz", figure_json(a.max_sm_clock_mhz)},
          {"last_level_cache_mib", figure_json(a.last_level_cache_mib)},
          {"interconnect_gbps", figure_json(a.interconnect_gbps)},
          {"mamf", {{"bf16", mamf_json(a.mamf_bf16)}, {"fp8", mamf_json(a.mamf_fp8)}}}};
}

}  // namespace ub::cli
