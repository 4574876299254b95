// The output flags every command shares (--json, --csv, --md; a table on stdout otherwise) and
// the one function that writes a command's result in the chosen format.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "report/document.hpp"

namespace ub::cli {

struct OutputOptions {
  bool json = false, csv = false, md = false;

  void add_to(CLI::App& cmd);
  // Writes `doc` as text / markdown / CSV, or `json` when --json.
  void emit(const report::Document& doc, const nlohmann::json& json) const;
};

}  // namespace ub::cli
