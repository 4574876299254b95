// The energy table; see energy_view.hpp.
#include "report/energy_view.hpp"

#include <fmt/format.h>

#include "analysis/energy_summary.hpp"
#include "report/format.hpp"

namespace ub::report {

namespace {

std::string value(const SideFigures& s, std::optional<double> v, int precision) {
  if (s.status == "oom") return "OOM";
  return v ? num(v, precision) : "-";
}

}  // namespace

void add_energy_block(Document& doc, const Comparison& c, const char* tag) {
  if (!has_energy(c)) return;
  auto& b = doc.add("Energy per sequence length");
  const bool priced = c.power_usd_per_kwh.has_value();
  b.table.columns = {{"seqlen"}, {"old tokens/J"}, {"new tokens/J"}, {"new/old"}};
  if (priced) b.table.columns.insert(b.table.columns.end(), {{"old elec. $/Mtok"}, {"new elec. $/Mtok"}});
  b.table.columns.push_back({"power from", Align::left});
  if (tag) b.table.columns.push_back({"data", Align::left});
  for (const CompareRow& r : c.rows) {
    std::vector<std::string> row{std::to_string(r.seqlen), value(r.old_side, r.old_side.tokens_per_joule, 1),
                                 value(r.new_side, r.new_side.tokens_per_joule, 1), ratio(r.energy_ratio)};
    if (priced) {
      row.push_back(value(r.old_side, r.old_side.energy_usd_per_mtok, 5));
      row.push_back(value(r.new_side, r.new_side.energy_usd_per_mtok, 5));
    }
    const std::string& from = r.new_side.energy_source.empty() ? r.old_side.energy_source : r.new_side.energy_source;
    row.push_back(from.empty() ? "-" : from);
    if (tag) row.push_back(tag);
    b.table.add_row(std::move(row));
  }
  b.notes.push_back("tokens/J per GPU: the tokens of a step over its energy (its time at the power measured while it ran).");
  if (priced) {
    b.notes.push_back(fmt::format("Electricity $/Mtok at {:.3f} USD/kWh and PUE {:.2f} (1.0: the GPU alone): what a "
                                  "team that owns the GPUs pays for their power, not the GPU-hour.",
                                  *c.power_usd_per_kwh, c.pue));
  }
}

void add_energy_json(nlohmann::json& row, const CompareRow& r) {
  const auto opt = [](std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  row["old_tokens_per_joule"] = opt(r.old_side.tokens_per_joule);
  row["new_tokens_per_joule"] = opt(r.new_side.tokens_per_joule);
  row["energy_ratio"] = opt(r.energy_ratio);
  row["old_energy_usd_per_mtok"] = opt(r.old_side.energy_usd_per_mtok);
  row["new_energy_usd_per_mtok"] = opt(r.new_side.energy_usd_per_mtok);
}

}  // namespace ub::report
