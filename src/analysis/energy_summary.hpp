// Energy per token, for a team that owns its GPUs and pays for power rather than GPU-hours: from
// the power the measuring commands sample while each step runs (records/telemetry.hpp: the
// driver's energy counter where the GPU has one), tokens per joule on each GPU per length, their
// ratio, and with a price of electricity and the facility's PUE the electricity per million tokens
// (facts/cost.hpp). benchmark.py's logs record no power: their rows say so rather than guess.
#pragma once

#include <string>
#include <vector>

#include "analysis/compare.hpp"

namespace ub {

// One or two sentences for the decision: the ratio of tokens per joule over the lengths both GPUs
// ran, the electricity per million tokens where priced, or why there is no energy figure.
// The price of electricity and the PUE are the comparison's (compare_runs' options).
std::vector<std::string> energy_conclusions(const Comparison& c);

// Whether any row of `c` has an energy figure on either side.
bool has_energy(const Comparison& c);

}  // namespace ub
