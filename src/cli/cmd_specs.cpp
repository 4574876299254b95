// `upgradebench specs [ID...]` and `specs --compare OLD NEW`: the catalog as tables, and the
// ratios between two GPUs (the ml-engineering guide's spec table, with every figure's source one command away).
#include <fmt/format.h>

#include <set>

#include "analysis/spec_compare.hpp"
#include "base/error.hpp"
#include "cli/catalog_json.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "report/format.hpp"

namespace ub::cli {

namespace {

using nlohmann::json;
using report::Align;

struct SpecsOptions {
  std::vector<std::string> ids;
  std::vector<std::string> compare;
  OutputOptions out;
};

// Compact cell for the overview: the value, "?" unknown, "X" unsupported, "yes" supported.
std::string short_cell(const Figure& f) {
  switch (f.state) {
    case FigureState::value: return report::figure(f);
    case FigureState::unknown: return "?";
    case FigureState::unsupported: return "X";
    case FigureState::supported: return "yes";
  }
  return "?";
}

void overview(const Catalog& cat, const SpecsOptions& o) {
  report::Document doc;
  auto& b = doc.add();
  b.table.columns = {{"id", Align::left}, {"name", Align::left}, {"bf16"}, {"fp8"}, {"fp4"},
                     {"nvfp4"}, {"HBM GB"}, {"TB/s"}, {"W"}, {"MAMF bf16"}};
  json j = json::array();
  for (const Accelerator& a : cat.all()) {
    b.table.add_row({a.id, a.name, short_cell(a.peak(Dtype::bf16)), short_cell(a.peak(Dtype::fp8)),
                     short_cell(a.peak(Dtype::fp4)), short_cell(a.peak(Dtype::nvfp4)),
                     short_cell(a.memory_gb), short_cell(a.bandwidth_tbps), short_cell(a.power_w),
                     a.mamf_bf16 ? report::figure(a.mamf_bf16->tflops) : "?"});
    j.push_back(accelerator_json(a));
  }
  b.notes.push_back("Dense TFLOPS (int8: TOPS). ? = not published, X = the hardware cannot "
                    "execute it, yes = executes it, peak not published.");
  b.notes.push_back("Details and the source of every figure: upgradebench specs ID");
  o.out.emit(doc, j);
}

void details(const Catalog& cat, const SpecsOptions& o) {
  report::Document doc;
  json j = json::array();
  for (const std::string& id : o.ids) {
    const Accelerator& a = cat.find(id);
    auto& b = doc.add(fmt::format("{} ({})", a.name, a.id));
    b.table.columns = {{"figure", Align::left}, {"value"}, {"source", Align::left}};
    auto row = [&](std::string name, const Figure& f) {
      std::string src = f.source.empty() ? "" : f.source;
      if (!f.note.empty()) src += (src.empty() ? "" : ": ") + f.note;
      b.table.add_row({std::move(name), report::figure(f), src});
    };
    for (const auto& [d, f] : a.peak_tflops) row(fmt::format("peak {} TFLOPS", to_string(d)), f);
    if (a.mamf_bf16) row("MAMF bf16 TFLOPS @ " + a.mamf_bf16->shape, a.mamf_bf16->tflops);
    if (a.mamf_fp8) row("MAMF fp8 TFLOPS @ " + a.mamf_fp8->shape, a.mamf_fp8->tflops);
    row(fmt::format("memory GB ({})", a.memory_type.empty() ? "type unknown" : a.memory_type),
        a.memory_gb);
    row("device total GiB (driver)", a.device_total_gib);
    b.table.add_row({"usable GiB (for memory fits)", a.capacity_gib() ? report::num(*a.capacity_gib(), 1) : "unknown",
                     "rule: " + a.capacity_basis()});
    row("bandwidth TB/s", a.bandwidth_tbps);
    row("power W", a.power_w);
    row("SMs", a.sm_count);
    row("max SM clock MHz", a.max_sm_clock_mhz);
    row("last-level cache MiB", a.last_level_cache_mib);
    row("interconnect GB/s per GPU", a.interconnect_gbps);
    b.notes.push_back(fmt::format("vendor {}, architecture {}, compute capability {}, {}", a.vendor,
                                  a.architecture, a.compute_capability.value_or("n/a"), a.status));
    b.notes.push_back(fmt::format("names: {}", fmt::join(a.aliases, ", ")));
    std::set<std::string> used;
    for (const auto& r : b.table.rows) {
      const std::string s = r[2].substr(0, r[2].find(':'));
      if (!s.empty() && s != "rule") used.insert(s);
    }
    b.notes.push_back("usable GiB: one rule for every accelerator (src/facts/catalog.hpp): the driver's total, or the "
                      "datasheet capacity as GiB, less the CUDA context and a 7% allocator reserve");
    for (const std::string& s : used) b.notes.push_back(fmt::format("[{}] {}", s, cat.source_text(s)));
    j.push_back(accelerator_json(a));
  }
  o.out.emit(doc, j);
}

void compare(const Catalog& cat, const SpecsOptions& o) {
  const Accelerator& old_gpu = cat.find(o.compare[0]);
  const Accelerator& new_gpu = cat.find(o.compare[1]);
  const SpecComparison c = compare_specs(old_gpu, new_gpu);
  report::Document doc;
  auto& b = doc.add(fmt::format("{} -> {}", old_gpu.name, new_gpu.name));
  b.table.columns = {{"figure", Align::left}, {old_gpu.id}, {new_gpu.id}, {"new/old"}};
  for (Dtype d : kAllDtypes) {
    b.table.add_row({fmt::format("peak {} TFLOPS", to_string(d)), report::figure(old_gpu.peak(d)),
                     report::figure(new_gpu.peak(d)), report::ratio(c.ratios.peak.at(d))});
  }
  auto mamf_cell = [](const std::optional<PublishedMamf>& m) {
    return m ? report::figure(m->tflops) : std::string("unknown");
  };
  b.table.add_row({"published MAMF bf16", mamf_cell(old_gpu.mamf_bf16),
                   mamf_cell(new_gpu.mamf_bf16), report::ratio(c.ratios.mamf_bf16)});
  b.table.add_row({"published MAMF fp8", mamf_cell(old_gpu.mamf_fp8), mamf_cell(new_gpu.mamf_fp8),
                   report::ratio(c.ratios.mamf_fp8)});
  auto fig_row = [&](std::string name, const Figure& a, const Figure& n, std::optional<double> r) {
    b.table.add_row({std::move(name), report::figure(a), report::figure(n), report::ratio(r)});
  };
  fig_row("memory GB", old_gpu.memory_gb, new_gpu.memory_gb, c.ratios.memory);
  fig_row("bandwidth TB/s", old_gpu.bandwidth_tbps, new_gpu.bandwidth_tbps, c.ratios.bandwidth);
  fig_row("power W", old_gpu.power_w, new_gpu.power_w, c.ratios.power);
  fig_row("interconnect GB/s", old_gpu.interconnect_gbps, new_gpu.interconnect_gbps,
          c.ratios.interconnect);
  if (!c.new_dtypes.empty()) {
    b.notes.push_back(fmt::format("{} executes what {} cannot: {}", new_gpu.id, old_gpu.id,
                                  fmt::join(dtype_names(c.new_dtypes), ", ")));
  }
  if (!c.lost_dtypes.empty()) {
    b.notes.push_back(fmt::format("{} cannot execute what {} can: {}", new_gpu.id, old_gpu.id,
                                  fmt::join(dtype_names(c.lost_dtypes), ", ")));
  }
  if (!c.unknown_dtypes.empty()) {
    b.notes.push_back(fmt::format("support not known for one of the two: {}",
                                  fmt::join(dtype_names(c.unknown_dtypes), ", ")));
  }
  json peaks = json::object();
  for (const auto& [d, r] : c.ratios.peak) peaks[std::string(to_string(d))] = optional_json(r);
  json j = {{"old", old_gpu.id},
            {"new", new_gpu.id},
            {"ratios",
             {{"bf16", optional_json(c.ratios.peak.at(Dtype::bf16))},
              {"fp8", optional_json(c.ratios.peak.at(Dtype::fp8))},
              {"memory", optional_json(c.ratios.memory)},
              {"bandwidth", optional_json(c.ratios.bandwidth)},
              {"power", optional_json(c.ratios.power)},
              {"mamf_bf16", optional_json(c.ratios.mamf_bf16)},
              {"mamf_fp8", optional_json(c.ratios.mamf_fp8)},
              {"interconnect", optional_json(c.ratios.interconnect)},
              {"peak", peaks}}},
            {"new_dtypes", dtype_names(c.new_dtypes)},
            {"lost_dtypes", dtype_names(c.lost_dtypes)},
            {"unknown_dtypes", dtype_names(c.unknown_dtypes)}};
  o.out.emit(doc, j);
}

}  // namespace

void register_specs(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<SpecsOptions>();
  auto* cmd = app.add_subcommand("specs", "The accelerator catalog: peaks per dtype, memory, "
                                          "bandwidth, power, published MAMF, with sources");
  cmd->add_option("ids", o->ids, "GPU ids or names to show in detail (default: overview of all)");
  cmd->add_option("--compare", o->compare, "OLD NEW: ratios per figure, new / old")
      ->expected(2)
      ->type_name("OLD NEW");
  o->out.add_to(*cmd);
  cmd->callback([&ctx, o] {
    if (!o->compare.empty()) {
      if (!o->ids.empty()) throw UsageError("specs: give IDs or --compare OLD NEW, not both");
      compare(ctx.catalog(), *o);
    } else if (!o->ids.empty()) {
      details(ctx.catalog(), *o);
    } else {
      overview(ctx.catalog(), *o);
    }
  });
}

}  // namespace ub::cli
