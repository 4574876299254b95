// The options `compare` and `report` share: prices, time to train, electricity, --strict, --force.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "analysis/compare.hpp"

namespace ub::cli {

struct CompareFlags {
  std::string price_old, price_new, tokens, gpus = "1";
  std::string power_price, pue = "1.0";  // electricity, for GPUs owned
  bool strict = false, force = false;

  void add_to(CLI::App& cmd);
  CompareOptions parse() const;  // throws UsageError naming the bad option
  // The options given that only a comparison of two runs uses (--price-old, --tokens, ...).
  std::vector<std::string> given() const;
  // UsageError naming the given options a comparison of `what` ("a MAMF comparison") has no use
  // for: every one but --force where it `takes_force` (which checks what runs agree on).
  void refuse_unused(const std::string& what, bool takes_force) const;
};

}  // namespace ub::cli
