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
#include "records/record_file.hpp"
#include "records/suite_manifest.hpp"

namespace ub::cli {

namespace {

namespace fs = std::filesystem;

// The regular files `input` names: itself, or a folder's by name; of a suite's folder, the files
// of the parts its manifest says are done (a failed part's leftovers are read by no command).
std::vector<fs::path> files_of(const std::string& input) {
  std::error_code ec;
  if (fs::is_regular_file(input, ec)) return {input};
  std::vector<fs::path> files;
  if (!fs::is_directory(input, ec)) return files;
  if (is_suite_folder(input)) {
    try {
      for (const ManifestPart& p : read_suite_manifest(input).parts) {
        if (p.status == PartStatus::done && !p.records.empty() && fs::is_regular_file(fs::path(input) / p.records, ec)) {
          files.push_back(fs::path(input) / p.records);
        }
      }
      std::sort(files.begin(), files.end());
      return files;
    } catch (const std::runtime_error&) {
      files.clear();  // a manifest that does not read: decide's reader says what is wrong with it
    }
  }
  for (const fs::directory_entry& e : fs::directory_iterator(input, ec)) {
    if (e.is_regular_file(ec)) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

void refuse_shared_figures(const std::vector<std::string>& inputs, const std::string& command,
                           const std::function<LineSource(const std::string&)>& stored) {
  struct File {
    std::string name;  // the input, or the file of a folder's
    std::vector<MetricPoint> figures;
    std::set<std::string> peer_keys;  // a peer's log by its measured lines
  };
  std::vector<std::vector<File>> files(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool selection = stored && inputs[i].rfind("run:", 0) == 0 && !fs::exists(inputs[i]);
    std::vector<fs::path> paths = selection ? std::vector<fs::path>{inputs[i]} : files_of(inputs[i]);
    for (const fs::path& path : paths) {
      File f{fs::is_regular_file(inputs[i]) || selection ? inputs[i] : path.string(), {}, {}};
      try {
        const LineSource t = selection ? stored(inputs[i]) : LineSource::file(path);
        if (detect_log_kind(t) == LogKind::training) {
          f.figures = training_metrics(read_run_log(t, WarmupOnly::leave_out));  // a sample of the steps: any length of log
        } else if (!t.is_stream() && !looks_like_records(t)) {  // a peer's log, read a line at a time
          PeerFigures p = peer_figures(t);
          f.figures = std::move(p.metrics);
          f.peer_keys.insert(std::move(p.key));
        } else {
          for (StoredRun& run : runs_of_file(t)) {
            f.figures.insert(f.figures.end(), run.metrics.begin(), run.metrics.end());
            if (run.format != "upgradebench") f.peer_keys.insert(run.key);
          }
        }
      } catch (const std::runtime_error&) {
        continue;  // not a file the history reads: its command's reader says what it is
      }
      files[i].push_back(std::move(f));
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t j = i + 1; j < inputs.size(); ++j) {
      for (const File& a : files[i]) {
        for (const File& b : files[j]) {
          const bool same_lines = std::any_of(a.peer_keys.begin(), a.peer_keys.end(),
                                              [&](const std::string& k) { return b.peer_keys.count(k) > 0; });
          if (!same_lines && !one_measurement(a.figures, b.figures)) continue;
          throw UsageError(fmt::format("{}: {} and {} are the same measurement: every figure both hold is alike (a "
                                       "copy with its header or context edited, lengths or steps added or left "
                                       "out?): compare two measurements", command, printable(a.name), printable(b.name)));
        }
      }
    }
  }
}

}  // namespace ub::cli
