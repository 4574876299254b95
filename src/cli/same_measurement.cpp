// Two inputs that share a measured point; see same_measurement.hpp.
#include "cli/same_measurement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
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
  std::map<std::string, size_t> owner;  // a point's figures, or a run's whole set -> the input that holds it
  const auto refuse = [&](size_t i, size_t j, const std::string& what) {
    throw UsageError(fmt::format("{}: {} and {} are the same measurement: both hold {}, to the last bit (a copy with "
                                 "its header or context edited?): compare two measurements", command,
                                 printable(inputs[i]), printable(inputs[j]), what));
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (const fs::path& file : files_of(inputs[i])) {
      std::vector<MetricPoint> points;
      try {
        const LineSource t = LineSource::file(file);
        if (detect_log_kind(t) == LogKind::training) {
          points = training_metrics(read_run_log(t, WarmupOnly::leave_out));  // a sample of the steps: any length of log
        } else {
          for (StoredRun& run : runs_of_file(t)) points.insert(points.end(), run.metrics.begin(), run.metrics.end());
        }
      } catch (const std::runtime_error&) {
        continue;  // not a file the history reads: its command's reader says what it is
      }
      for (const MetricPoint* m : telling_points(points)) {
        const std::string key = fmt::format("{} {} {} {} {} {}", m->metric, m->x, m->n, m->median, m->low, m->high);
        const auto [at, fresh] = owner.emplace(key, i);
        if (fresh || at->second == i) continue;
        refuse(at->second, i, fmt::format("{}{} from the same {} samples, median {:g}", m->metric,
                                          m->x > 0 ? fmt::format(" at {:g}", m->x) : "", m->n, m->median));
      }
      if (const std::string set = figures_set_key(points); !set.empty()) {
        const auto [at, fresh] = owner.emplace("set " + set, i);
        if (!fresh && at->second != i) refuse(at->second, i, fmt::format("the same {} figures", points.size()));
      }
    }
  }
}

}  // namespace ub::cli
