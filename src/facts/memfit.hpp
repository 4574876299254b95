// Peak memory as a function of tokens: least squares peak_gib = a + b * tokens over the points
// that ran (tokens = batch * seqlen), with R^2, and the longest sequence that fits a capacity:
// floor((capacity - a) / b / batch). With activation checkpointing and fused cross-entropy the
// ml-engineering guide measured 12.6 GiB + 0.00043 GiB/token: the fit is what makes "fits up to 256k" a number.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ub {

struct MemoryFit {
  double intercept_gib = 0, slope_gib_per_token = 0, r2 = 0;
  size_t points = 0;
  // The longest sequence whose predicted peak is within `capacity_gib`; nullopt when the slope is
  // not positive (memory does not grow: no limit can be read off the fit) or the limit is beyond
  // what a 64-bit count holds.
  std::optional<int64_t> max_seqlen(double capacity_gib, int64_t batch) const;
};

// Throws WorkError, beginning with `where` (the file the points are of), with fewer than two
// distinct token counts, or when the fitted memory falls over the measured tokens by more than
// noise (0.5 GiB or 2%).
MemoryFit fit_memory(const std::vector<std::pair<double, double>>& tokens_and_gib, const std::string& where);

}  // namespace ub
