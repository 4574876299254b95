// What `suite --resume` runs; see suite_resume.hpp.
#include "cli/suite_resume.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "base/error.hpp"
#include "base/line_source.hpp"
#include "base/text.hpp"
#include "cli/arguments.hpp"
#include "cli/train_options.hpp"
#include "records/readers/read_run.hpp"

namespace ub::cli {

namespace {

namespace fs = std::filesystem;

// The workload's flags: they take no value. Any other option followed by an argument that is not
// itself an option takes it (a suite writes each option's value as its own argument).
const std::set<std::string>& flags() {
  static const std::set<std::string> f = {"--checkpointing", "--selective-checkpointing", "--offload-checkpoints",
                                          "--offload-optimizer"};
  return f;
}

// A command line's options: name -> its value ("" for a flag); the last one given wins, as on the
// command line.
std::map<std::string, std::string> options_of(const std::vector<std::string>& command) {
  std::map<std::string, std::string> o;
  for (size_t i = 1; i < command.size(); ++i) {
    const std::string& a = command[i];
    if (a.rfind("--", 0) != 0) continue;  // a positional argument (a trace)
    if (const size_t eq = a.find('='); eq != std::string::npos) {
      o[a.substr(0, eq)] = a.substr(eq + 1);
    } else if (flags().count(a) || i + 1 == command.size() || command[i + 1].rfind("--", 0) == 0) {
      o[a] = "";
    } else {
      o[a] = command[++i];
    }
  }
  return o;
}

// Whether a depth as a command gives it stands for the workload's: the same number, or all
// layers ("0") where the suite was asked for all (its manifest holds the depth that resolved to).
bool same_depth(const std::string& given, const SuiteWorkload& w) {
  if (given == std::to_string(w.layers)) return true;
  const auto asked = std::find(w.train_args.begin(), w.train_args.end(), "--layers");
  return given == "0" && asked != w.train_args.end() && asked + 1 != w.train_args.end() && *(asked + 1) == "0";
}

// The value of a size option (0 when absent), or nullopt when it is not one.
std::optional<int64_t> size_of(const std::map<std::string, std::string>& o, const char* name) {
  const auto it = o.find(name);
  if (it == o.end() || it->second == "0") return 0;
  try {
    return parse_size(it->second, name);
  } catch (const UsageError&) {
    return std::nullopt;
  }
}

// The first free DIR/NAME.earlier-N.EXT: beside the records, so the move stays on their file system.
fs::path earlier_place(const fs::path& dir, const ManifestPart& p) {
  const fs::path records = p.records;
  for (int n = 1;; ++n) {
    const fs::path place = dir / fmt::format("{}.earlier-{}{}", p.name, n, records.extension().string());
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(place, ec))) return place;
  }
}

// A sweep's records the resume can continue: readable, of the manifest's workload. Why not, else "".
std::string not_continued(const fs::path& records, const ManifestPart& p, const SuiteWorkload& w) {
  try {
    const RunLog log = read_run_log(LineSource::file(records.string()), WarmupOnly::leave_out);
    if (const std::vector<std::string> d = w.departures_of(log); !d.empty()) {
      return fmt::format("its records {} are of another workload ({}, theirs then the manifest's)", p.records,
                         fmt::join(d, "; "));
    }
  } catch (const std::exception&) {
    return fmt::format("its records {} are not a sweep's", p.records);
  }
  return "";
}

// Why a done part must run again ("" when the folder backs it), and whether its records stay.
std::pair<std::string, bool> why_again(const fs::path& dir, const ManifestPart& p, const SuiteWorkload& w) {
  std::error_code ec;
  const fs::path records = dir / p.records;
  const fs::file_status st = fs::symlink_status(records, ec);
  if (!fs::exists(st)) return {fmt::format("done, but its records {} are missing", p.records), false};
  if (!fs::is_regular_file(st)) return {fmt::format("done, but its records {} are not a file", p.records), false};
  if (p.exit_code && *p.exit_code != 0) return {fmt::format("done, but with exit code {}", *p.exit_code), false};
  if (LineSource::file(records.string()).first_nonblank().empty()) {
    return {fmt::format("done, but its records {} are empty", p.records), false};
  }
  const std::vector<int64_t> asked = p.lengths_asked();
  if (p.name != "sweep" || asked.empty()) return {"", false};
  if (const std::string why = not_continued(records, p, w); !why.empty()) return {"done, but " + why, false};
  const RunLog log = read_run_log(LineSource::file(records.string()), WarmupOnly::leave_out);
  std::vector<int64_t> lacking;
  for (int64_t len : asked) {
    if (!log.point(len)) lacking.push_back(len);
  }
  if (lacking.empty()) return {"", false};
  return {fmt::format("done, but its records {} hold no step at {} tokens", p.records, fmt::join(lacking, ", ")), true};
}

}  // namespace

std::string command_departs(const std::vector<std::string>& command, const SuiteWorkload& w) {
  if (command.empty()) return "no command at all";
  const std::map<std::string, std::string> o = options_of(command);
  const std::string& verb = command.front();
  const bool shapes = verb == "mamf" && o.count("--shapes-of");
  const bool step = verb == "sweep" || verb == "train" || (verb == "decompose" && o.count("--seqlen")) || shapes;
  std::vector<std::string> d;
  const auto check = [&](const char* what, const std::string& here, const std::string& there) {
    if (here != there) d.push_back(fmt::format("{} {} vs {}", what, printable(here), printable(there)));
  };
  const auto value = [&](const char* name, const std::string& absent) {
    const auto it = o.find(name);
    return it == o.end() ? absent : it->second;
  };
  if (step || verb == "attention") check("batch", value("--batch", "1"), std::to_string(w.batch));
  if (!step) return fmt::format("{}", fmt::join(d, "; "));
  check("model", value(shapes ? "--shapes-of" : "--model", TrainOptions{}.model), w.model);
  if (const std::string depth = value("--layers", "(all)"); !same_depth(depth, w)) {
    d.push_back(fmt::format("layers {} vs {}", printable(depth), w.layers));
  }
  const bool checkpointing = o.count("--checkpointing") || o.count("--selective-checkpointing") ||
                             o.count("--offload-checkpoints");
  check("checkpointing", checkpointing ? "true" : "false", w.checkpointing ? "true" : "false");
  for (const auto& [name, what, manifest] : {std::tuple{"--mlp-tile", "MLP tile", w.mlp_tile},
                                             std::tuple{"--loss-chunk", "loss chunk", w.loss_chunk}}) {
    const std::optional<int64_t> v = size_of(o, name);
    check(what, v ? std::to_string(*v) : value(name, ""), std::to_string(manifest));
  }
  if (!shapes) {  // the products alone have no optimizer
    check("precision", value("--precision", "master"), w.master_weights ? "master" : "bf16");
  }
  return fmt::format("{}", fmt::join(d, "; "));
}

std::vector<ResumeStep> plan_resume(const fs::path& dir, const SuiteManifest& m) {
  std::vector<ResumeStep> steps;
  for (const ManifestPart& p : m.parts) {
    if (const std::string d = command_departs(p.command, m.workload); !d.empty()) {
      throw WorkError(fmt::format("--resume: {}: part {}'s command runs another workload than the manifest's ({}, the "
                                  "command's, then the workload's): the manifest was edited; start a new suite folder",
                                  (dir / "manifest.json").string(), p.name, d));
    }
    ResumeStep s;
    if (p.status == PartStatus::done) {
      const auto [why, keep] = why_again(dir, p, m.workload);
      s.run = s.again = !why.empty();
      s.why = why;
      s.sweep_resume = keep;
    } else {
      s.run = p.status != PartStatus::skipped;
      // A sweep cut short keeps what it measured, where that is of the workload: its --resume
      // measures the rest. Records it cannot continue are moved aside, and it starts again.
      std::error_code ec;
      const fs::path records = dir / p.records;
      if (s.run && p.name == "sweep" && fs::is_regular_file(fs::symlink_status(records, ec)) &&
          !LineSource::file(records.string()).first_nonblank().empty()) {
        s.why = not_continued(records, p, m.workload);
        s.sweep_resume = s.why.empty();
      }
    }
    steps.push_back(s);
  }
  return steps;
}

std::string set_aside_records(const fs::path& dir, const ManifestPart& p) {
  std::error_code ec;
  const fs::path records = dir / p.records;
  if (!fs::exists(fs::symlink_status(records, ec))) return "";
  const fs::path place = earlier_place(dir, p);
  fs::rename(records, place, ec);
  if (ec) {
    throw WorkError(fmt::format("suite: cannot move {}'s earlier records {} to {}: {}; move them out of the folder "
                                "yourself, then `suite --resume` measures the part again", p.name, records.string(),
                                place.string(), ec.message()));
  }
  return place.string();
}

}  // namespace ub::cli
