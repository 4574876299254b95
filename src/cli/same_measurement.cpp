// Two inputs whose figures are one measurement; see same_measurement.hpp.
#include "cli/same_measurement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "analysis/history/stored_run.hpp"
#include "base/error.hpp"
#include "base/text.hpp"
#include "records/readers/log_kind.hpp"
#include "records/readers/read_run.hpp"

namespace ub::cli {

namespace {

namespace fs = std::filesystem;

// The regular files `input` names: itself, or a folder's (a suite's parts), by name.
std::vector<fs::path> files_of(const std::string& input) {
  std::error_code ec;
  if (fs::is_regular_file(input, ec)) return {input};
  std::vector<fs::path> files;
  if (!fs::is_directory(input, ec)) return files;
  for (const fs::directory_entry& e : fs::directory_iterator(input, ec)) {
    if (e.is_regular_file(ec)) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

void refuse_shared_figures(const std::vector<std::string>& inputs, const std::string& command) {
  std::vector<std::vector<MetricPoint>> figures(inputs.size());  // each input's, its files' together
  std::vector<std::set<std::string>> peer_keys(inputs.size());    // a peer's log by its measured lines
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (const fs::path& file : files_of(inputs[i])) {
      try {
        const LineSource t = LineSource::file(file);
        if (detect_log_kind(t) == LogKind::training) {
          const std::vector<MetricPoint> points = training_metrics(read_run_log(t, WarmupOnly::leave_out));  // a sample of the steps: any length of log
          figures[i].insert(figures[i].end(), points.begin(), points.end());
        } else {
          for (StoredRun& run : runs_of_file(t)) {
            figures[i].insert(figures[i].end(), run.metrics.begin(), run.metrics.end());
            if (run.format != "upgradebench") peer_keys[i].insert(run.key);
          }
        }
      } catch (const std::runtime_error&) {
        continue;  // not a file the history reads: its command's reader says what it is
      }
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t j = i + 1; j < inputs.size(); ++j) {
      const bool same_lines = std::any_of(peer_keys[i].begin(), peer_keys[i].end(),
                                          [&](const std::string& k) { return peer_keys[j].count(k) > 0; });
      if (!same_lines && !one_measurement(figures[i], figures[j])) continue;
      throw UsageError(fmt::format("{}: {} and {} are the same measurement: the figures both hold are alike to the last "
                                   "bit (a copy with its header or context edited, or lengths added or left out?): "
                                   "compare two measurements", command, printable(inputs[i]), printable(inputs[j])));
    }
  }
}

}  // namespace ub::cli
