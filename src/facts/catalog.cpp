// Catalog loading and lookup. Every parse error names the file, the entry and the field.
#include "facts/catalog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"
#include "base/units.hpp"

namespace ub {

std::string_view to_string(FigureState s) {
  switch (s) {
    case FigureState::value: return "value";
    case FigureState::unknown: return "unknown";
    case FigureState::supported: return "supported";
    case FigureState::unsupported: return "unsupported";
  }
  return "unknown";
}

namespace {

using nlohmann::json;

// Parses a figure: number | "unknown" | "unsupported" | "supported" | {value, source, note}.
Figure parse_figure(const json& j, const std::string& default_source, const std::string& where,
                    bool allow_support_states) {
  Figure f;
  f.source = default_source;
  const json* v = &j;
  if (j.is_object()) {
    if (!j.contains("value")) throw WorkError(fmt::format("{}: object without \"value\"", where));
    v = &j.at("value");
    if (j.contains("source")) f.source = j.at("source").get<std::string>();
    if (j.contains("note")) f.note = j.at("note").get<std::string>();
  }
  if (v->is_number()) {
    f.state = FigureState::value;
    f.value = v->get<double>();
    if (!(f.value > 0)) throw WorkError(fmt::format("{}: must be positive, got {}", where, f.value));
  } else if (v->is_string() && v->get<std::string>() == "unknown") {
    f.state = FigureState::unknown;
  } else if (allow_support_states && v->is_string() && v->get<std::string>() == "unsupported") {
    f.state = FigureState::unsupported;
  } else if (allow_support_states && v->is_string() && v->get<std::string>() == "supported") {
    f.state = FigureState::supported;
  } else {
    throw WorkError(fmt::format("{}: expected a number or \"unknown\"{}, got {}", where,
                                allow_support_states ? ", \"unsupported\", \"supported\"" : "",
                                v->dump()));
  }
  return f;
}

Figure optional_figure(const json& entry, const char* key, const std::string& src,
                       const std::string& where) {
  if (!entry.contains(key)) return Figure{FigureState::unknown, 0.0, src, ""};
  return parse_figure(entry.at(key), src, fmt::format("{}.{}", where, key), false);
}

std::optional<PublishedMamf> parse_mamf(const json& entry, const char* dtype,
                                        const std::string& where) {
  if (!entry.contains("mamf") || !entry.at("mamf").contains(dtype)) return std::nullopt;
  const json& m = entry.at("mamf").at(dtype);
  const std::string w = fmt::format("{}.mamf.{}", where, dtype);
  PublishedMamf out;
  json fig = {{"value", m.at("tflops")}, {"source", m.value("source", std::string{})}};
  if (m.contains("note")) fig["note"] = m.at("note");
  out.tflops = parse_figure(fig, "", w + ".tflops", false);
  out.shape = m.value("shape", "");
  out.software = m.value("software", "");
  return out;
}

std::string normalise(std::string_view s) { return to_lower(trim(s)); }

}  // namespace

namespace {

// The total the capacity rule starts from, and whether it was read off the device.
std::optional<std::pair<double, bool>> device_total(const Accelerator& a) {
  if (a.device_total_gib.known()) return std::pair{a.device_total_gib.value, true};
  if (a.memory_gb.known()) return std::pair{a.memory_gb.value, false};
  return std::nullopt;
}

}  // namespace

std::optional<double> Accelerator::fraction_of_peak(std::optional<double> tflops, Dtype d) const {
  return fraction_of(tflops, peak(d).get());
}

std::optional<double> Accelerator::most_measurable_tflops(Dtype d) const {
  const auto it = peak_tflops.find(d);
  if (it == peak_tflops.end() || !it->second.known()) return std::nullopt;
  return 1.1 * it->second.value;
}

std::optional<Accelerator::StepBound> Accelerator::most_step_tflops(Dtype d) const {
  if (const std::optional<double> mamf = published_mamf(d)) {
    return StepBound{1.1 * *mamf, fmt::format("matmul ceiling (MAMF {:g} TFLOPS, published)", *mamf)};
  }
  if (const std::optional<double> most = most_measurable_tflops(d)) {
    return StepBound{*most, fmt::format("dense {} peak ({:g})", to_string(d), peak(d).value)};
  }
  return std::nullopt;
}

std::optional<double> Accelerator::most_measurable_gib() const {
  const auto total = device_total(*this);
  return total ? std::optional<double>(1.02 * total->first) : std::nullopt;
}

std::optional<double> Accelerator::published_mamf(Dtype d) const {
  const std::optional<PublishedMamf>& m = d == Dtype::bf16 ? mamf_bf16 : d == Dtype::fp8 ? mamf_fp8 : std::nullopt;
  return m ? m->tflops.get() : std::nullopt;
}

std::optional<double> Accelerator::capacity_gib() const {
  const auto total = device_total(*this);
  if (!total) return std::nullopt;
  return total->first - kCudaContextGib - kAllocatorReserve * total->first;
}

std::string Accelerator::capacity_basis() const {
  const auto total = device_total(*this);
  if (!total) return "no capacity figure";
  return fmt::format("{:.1f} GiB {} - {:.2f} GiB context - {:.0f}% allocator reserve = {:.1f} GiB", total->first,
                     total->second ? "reported by the driver" : "(datasheet capacity as GiB)", kCudaContextGib,
                     100 * kAllocatorReserve, *capacity_gib());
}

Catalog Catalog::load(const std::filesystem::path& file) {
  return parse(read_json_file(file, "an accelerator catalog"), file);
}

Catalog Catalog::parse(const std::string& text, const std::filesystem::path& file) {
  const json root = parse_json_text(text, file.string());
  Catalog cat;
  try {
    for (const auto& [k, v] : root.at("sources").items()) cat.sources_[k] = v.get<std::string>();
    for (const json& e : root.at("accelerators")) {
      Accelerator a;
      a.id = e.at("id").get<std::string>();
      const std::string where = fmt::format("{}: accelerator '{}'", file.string(), a.id);
      if (trim(a.id).empty()) throw WorkError(fmt::format("{}: an accelerator with an empty id", file.string()));
      a.name = e.at("name").get<std::string>();
      a.vendor = e.at("vendor").get<std::string>();
      a.architecture = e.at("architecture").get<std::string>();
      a.status = e.at("status").get<std::string>();
      if (e.contains("compute_capability") && e.at("compute_capability").is_string()) {
        a.compute_capability = e.at("compute_capability").get<std::string>();
      }
      a.aliases = e.value("aliases", std::vector<std::string>{});
      const std::string src = e.at("source").get<std::string>();
      for (const auto& item : e.at("peak_tflops").items()) {  // a misspelled dtype is a figure lost
        const std::string key = item.key();
        if (std::none_of(kAllDtypes.begin(), kAllDtypes.end(), [&](Dtype d) { return to_string(d) == key; })) {
          throw WorkError(fmt::format("{}: peak_tflops has \"{}\", which is not a dtype upgradebench knows", where,
                                      printable(key)));
        }
      }
      for (Dtype d : kAllDtypes) {
        const std::string key(to_string(d));
        if (!e.at("peak_tflops").contains(key)) {
          throw WorkError(fmt::format("{}: peak_tflops has no \"{}\" (write \"unknown\" if not "
                                      "published)", where, key));
        }
        a.peak_tflops[d] = parse_figure(e.at("peak_tflops").at(key), src,
                                        fmt::format("{}.peak_tflops.{}", where, key), true);
      }
      a.memory_gb = optional_figure(e, "memory_gb", src, where);
      a.memory_type = e.value("memory_type", "");
      a.device_total_gib = optional_figure(e, "device_total_gib", src, where);
      a.bandwidth_tbps = optional_figure(e, "bandwidth_tbps", src, where);
      a.power_w = optional_figure(e, "power_w", src, where);
      a.max_sm_clock_mhz = optional_figure(e, "max_sm_clock_mhz", src, where);
      a.last_level_cache_mib = optional_figure(e, "last_level_cache_mib", src, where);
      a.interconnect_gbps = optional_figure(e, "interconnect_gbps", src, where);
      a.sm_count = optional_figure(e, "sm_count", src, where);
      a.mamf_bf16 = parse_mamf(e, "bf16", where);
      a.mamf_fp8 = parse_mamf(e, "fp8", where);
      cat.accelerators_.push_back(std::move(a));
    }
  } catch (const json::exception& e) {
    throw WorkError(fmt::format("{}: malformed catalog: {}", file.string(), json_error_text(e)));
  }
  // Every figure's source must be in the source table.
  for (const Accelerator& a : cat.accelerators_) {
    auto check = [&](const Figure& f, std::string_view field) {
      if (!f.source.empty() && !cat.sources_.contains(f.source)) {
        throw WorkError(fmt::format("{}: accelerator '{}' field {}: unknown source '{}'",
                                    file.string(), a.id, field, f.source));
      }
    };
    for (const auto& [d, f] : a.peak_tflops) check(f, to_string(d));
    for (const auto* m : {&a.mamf_bf16, &a.mamf_fp8}) {
      if (*m) check((*m)->tflops, "mamf");
    }
    check(a.memory_gb, "memory_gb");
    check(a.device_total_gib, "device_total_gib");
    check(a.bandwidth_tbps, "bandwidth_tbps");
    check(a.power_w, "power_w");
    check(a.max_sm_clock_mhz, "max_sm_clock_mhz");
    check(a.last_level_cache_mib, "last_level_cache_mib");
    check(a.interconnect_gbps, "interconnect_gbps");
    check(a.sm_count, "sm_count");
  }
  // Figures one part cannot have together: a measured ceiling past its peak, a driver's total past
  // its datasheet memory, a peak no accelerator comes near.
  constexpr double kMostTflops = 1e6;
  for (const Accelerator& a : cat.accelerators_) {
    const std::string where = fmt::format("{}: accelerator '{}'", file.string(), a.id);
    for (const auto& [d, f] : a.peak_tflops) {
      if (f.known() && f.value > kMostTflops) {
        throw WorkError(fmt::format("{}: peak_tflops.{} {:g} is past any accelerator ({:g})", where, to_string(d), f.value,
                                    kMostTflops));
      }
    }
    for (const auto& [m, d] : {std::pair{&a.mamf_bf16, Dtype::bf16}, std::pair{&a.mamf_fp8, Dtype::fp8}}) {
      if (*m && (*m)->tflops.known() && a.peak(d).known() && (*m)->tflops.value > a.peak(d).value) {
        throw WorkError(fmt::format("{}: its published {} MAMF {:g} TFLOPS is past its peak {:g}: a measured ceiling is "
                                    "below the peak", where, to_string(d), (*m)->tflops.value, a.peak(d).value));
      }
    }
    // (Datasheets round their GB loosely: an H200's "141 GB" is 140.4 GiB to its driver.)
    if (a.device_total_gib.known() && a.memory_gb.known() && a.device_total_gib.value > 1.1 * a.memory_gb.value) {
      throw WorkError(fmt::format("{}: device_total_gib {:g} is past its {:g} GB of memory", where, a.device_total_gib.value,
                                  a.memory_gb.value));
    }
  }
  // Names must be unambiguous: an id or alias may belong to one accelerator only, and an id to
  // one entry.
  std::set<std::string> ids;
  for (const Accelerator& a : cat.accelerators_) {
    if (!ids.insert(normalise(a.id)).second) {
      throw WorkError(fmt::format("{}: accelerator '{}' is listed twice: which figures are its is not known", file.string(),
                                  a.id));
    }
  }
  std::map<std::string, std::string> owner;
  for (const Accelerator& a : cat.accelerators_) {
    std::vector<std::string> names = a.aliases;
    names.push_back(a.id);
    for (const std::string& n : names) {
      auto [it, fresh] = owner.emplace(normalise(n), a.id);
      if (!fresh && it->second != a.id) {
        throw WorkError(fmt::format("{}: name '{}' belongs to both '{}' and '{}'", file.string(), n,
                                    it->second, a.id));
      }
    }
  }
  return cat;
}

const Accelerator* Catalog::try_find(std::string_view name) const {
  const std::string key = normalise(name);
  for (const Accelerator& a : accelerators_) {
    if (normalise(a.id) == key) return &a;
    for (const std::string& alias : a.aliases) {
      if (normalise(alias) == key) return &a;
    }
  }
  return nullptr;
}

const Accelerator& Catalog::find(std::string_view name) const {
  if (const Accelerator* a = try_find(name)) return *a;
  // Rank accelerators by the closest of their names (id, name or alias), report their ids. A name
  // that holds every word of the query ("rtx pro 6000" in "NVIDIA RTX PRO 6000 Blackwell Server
  // Edition") comes first: a longer name is no worse a match for a partial query.
  const auto words = split(to_lower(std::string(name)), ' ');
  const auto holds_all = [&](const std::string& candidate) {
    const std::string c = to_lower(candidate);
    return !words.empty() && std::all_of(words.begin(), words.end(), [&](const std::string& w) { return c.find(w) != std::string::npos; });
  };
  std::vector<std::pair<size_t, std::string>> scored;
  for (const Accelerator& a : accelerators_) {
    size_t best = std::min(edit_distance(name, a.id), edit_distance(name, a.name));
    bool contains = holds_all(a.id) || holds_all(a.name);
    for (const std::string& alias : a.aliases) {
      best = std::min(best, edit_distance(name, alias));
      contains = contains || holds_all(alias);
    }
    scored.emplace_back(contains ? 0 : best + 1, a.id);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> ids;
  for (size_t i = 0; i < scored.size() && i < 3; ++i) ids.push_back(scored[i].second);
  throw UsageError(fmt::format("unknown GPU '{}'; closest known ids: {} (see `upgradebench specs`)",
                               name, fmt::join(ids, ", ")));
}

std::string Catalog::source_text(const std::string& id) const {
  auto it = sources_.find(id);
  return it == sources_.end() ? std::string{} : it->second;
}

}  // namespace ub
