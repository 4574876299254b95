// The options `compare` and `report` share: prices, time to train, --strict, --force.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "analysis/compare.hpp"

namespace ub::cli {

struct CompareFlags {
  std::string price_old, price_new, tokens, gpus = "1";
  bool strict = false, force = false;

  void add_to(CLI::App& cmd);
  CompareOptions parse() const;  // throws UsageError naming the bad option
};

}  // namespace ub::cli
