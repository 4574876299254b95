// The output flags every command shares (--json, --csv, --md; a table on stdout otherwise) and
// the one function that writes a command's result in the chosen format.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "report/document.hpp"

namespace ub::cli {

struct OutputOptions {
  bool json = false, csv = false, md = false;

  void add_to(CLI::App& cmd);
  // Writes `doc` as text / markdown / CSV, or `json` when --json.
  void emit(const report::Document& doc, const nlohmann::json& json) const;
};

// "upgradebench: warning: <text>" on stderr, its control characters escaped (the text often holds
// a line of a file): what a reader tolerated (a damaged line skipped, a point read twice), said
// where a person sees it whatever the output format, and never in the output a script parses.
void warn(const std::string& text);

// warn() for each of a reader's `warnings` about a line of `path` it skipped or read twice (those
// that begin "path:LINE: "); the counts of lines a reader sets aside by design (blank lines, a
// peer's other output) are for the command's own output, not for stderr.
void warn_about_lines(const std::vector<std::string>& warnings, const std::string& path);

}  // namespace ub::cli
