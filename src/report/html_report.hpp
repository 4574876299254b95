// A report written to a folder: report.md, report.html (self-contained: the Vega, Vega-Lite and
// Vega-Embed builds from the npm registry are inlined, so the page works offline, opened from
// disk) and charts/<id>.png + .svg drawn by gnuplot.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "report/chart.hpp"
#include "report/document.hpp"

namespace ub::report {

struct ReportContent {
  std::string title;
  std::string banner;     // shown above everything when not empty (what the numbers are, if not measurements)
  std::string chart_tag;  // each chart's title carries it when the chart leaves the page (EXAMPLE DATA, PREDICTED)
  std::string alert;   // shown in red under it when not empty (the runs' software differs)
  Document body;
  bool lead_block = false;  // the body's first block goes above the charts (the decision at a glance)
  std::vector<Chart> charts;
};

// The folder holding node_modules/{vega,vega-lite,vega-embed}; throws WorkError saying how to
// install them when absent. `hint` is checked first (--web-dir / UPGRADEBENCH_WEB).
std::filesystem::path find_web_modules(const std::filesystem::path& hint,
                                       const std::vector<std::filesystem::path>& candidates);

std::string render_html(const Document& doc);  // tables and notes as HTML

// Writes report.md, report.html and charts/ into `dir` (created). A report.html or report.md there
// that an earlier report did not write, or not as it wrote it, is refused (UsageError), not
// overwritten.
void write_report(const ReportContent& r, const std::filesystem::path& dir,
                  const std::filesystem::path& web_modules);

// Whether a report.html or report.md is one this tool wrote (each page carries a mark saying so):
// a page that is not is the user's, never overwritten.
bool written_by_report(const std::filesystem::path& page);

// Whether a page is not as this tool wrote it: its last line is no digest of the bytes before it
// (edited since, cut short, or written before pages carried one), or it is past 256 MiB (not read
// whole to tell). Such a page is not overwritten.
bool edited_since_written(const std::filesystem::path& page);

}  // namespace ub::report
