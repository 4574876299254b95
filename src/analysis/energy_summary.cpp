// Energy per token of two runs; see energy_summary.hpp.
#include "analysis/energy_summary.hpp"

#include "base/text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ub {

bool has_energy(const Comparison& c) {
  return std::any_of(c.rows.begin(), c.rows.end(), [](const CompareRow& r) {
    return r.old_side.tokens_per_joule || r.new_side.tokens_per_joule;
  });
}

std::vector<std::string> energy_conclusions(const Comparison& c) {
  std::vector<std::string> out;
  double low = 0, high = 0;
  int64_t first = 0, last = 0;
  std::string source;
  for (const CompareRow& r : c.rows) {
    if (!r.energy_ratio) continue;
    if (first == 0) first = r.seqlen, low = high = *r.energy_ratio;
    last = r.seqlen;
    low = std::min(low, *r.energy_ratio), high = std::max(high, *r.energy_ratio);
    source = r.new_side.energy_source == r.old_side.energy_source ? r.new_side.energy_source
                                                                   : r.old_side.energy_source + " / " + r.new_side.energy_source;
  }
  if (first == 0) {
    out.push_back(has_energy(c) ? "Energy: only one GPU's steps recorded their power: tokens per joule are not compared."
                                : "Energy: neither run recorded the GPU's power (benchmark.py's logs carry none): "
                                  "tokens per joule unknown.");
    return out;
  }
  const std::string range = span_text(fmt::format("{:.2f}", low), fmt::format("{:.2f}", high)) + "x";
  const std::string lengths = first == last ? fmt::format("at {} tokens", first) : fmt::format("over {}-{} tokens", first, last);
  out.push_back(fmt::format("Energy: the {} does {} the {}'s tokens per joule {} ({}, each step's time at its measured "
                            "power){}.", c.new_run.gpu.empty() ? "new GPU" : c.new_run.gpu, range,
                            c.old_run.gpu.empty() ? "old GPU" : c.old_run.gpu, lengths, source,
                            c.power_usd_per_kwh ? "" : "; --power-price USD/kWh (and --pue) prices it for GPUs you own"));
  if (c.power_usd_per_kwh) {
    std::vector<double> old_usd, new_usd;
    for (const CompareRow& r : c.rows) {
      if (!r.old_side.energy_usd_per_mtok || !r.new_side.energy_usd_per_mtok) continue;
      old_usd.push_back(*r.old_side.energy_usd_per_mtok), new_usd.push_back(*r.new_side.energy_usd_per_mtok);
    }
    const auto span = [](const std::vector<double>& v) {
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      return span_text(fixed_decimals(*lo, 5), fixed_decimals(*hi, 5));
    };
    if (!old_usd.empty()) {
      out.push_back(fmt::format("Electricity at {:.3f} USD/kWh and PUE {:.2f}: {} USD per million tokens on the old GPU, {} "
                                "on the new (the table per length).", *c.power_usd_per_kwh, c.pue, span(old_usd), span(new_usd)));
    }
  }
  return out;
}

}  // namespace ub
