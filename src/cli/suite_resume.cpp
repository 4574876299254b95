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

// The options of this program's commands that take no value: every other `--name` takes the next
// argument (or its `=value`).
const std::set<std::string>& flags() {
  static const std::set<std::string> f = {"--checkpointing", "--selective-checkpointing", "--offload-checkpoints",
                                          "--find-max", "--json", "--csv", "--md", "--no-autotune", "--mem-debug",
                                          "--breakdown", "--offload-optimizer", "--resume", "--no-find-max"};
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
    } else if (flags().count(a) || i + 1 == command.size()) {
      o[a] = "";
    } else {
      o[a] = command[++i];
    }
  }
  return o;
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

// The first free DIR/logs/NAME.earlier-N.EXT.
fs::path earlier_place(const fs::path& dir, const ManifestPart& p) {
  const fs::path records = p.records;
  for (int n = 1;; ++n) {
    const fs::path place = dir / "logs" / fmt::format("{}.earlier-{}{}", p.name, n, records.extension().string());
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(place, ec))) return place;
  }
}

// Why a done part must run again ("" when the folder backs it), and whether its records stay.
std::pair<std::string, bool> why_again(const fs::path& dir, const ManifestPart& p) {
  std::error_code ec;
  const fs::path records = dir / p.records;
  const fs::file_status st = fs::symlink_status(records, ec);
  if (!fs::exists(st)) return {fmt::format("done, but its records {} are missing", p.records), false};
  if (!fs::is_regular_file(st)) return {fmt::format("done, but its records {} are not a file", p.records), false};
  if (p.exit_code && *p.exit_code != 0) return {fmt::format("done, but with exit code {}", *p.exit_code), false};
  const std::vector<int64_t> asked = p.lengths_asked();
  if (p.name != "sweep" || asked.empty()) return {"", false};
  std::vector<int64_t> lacking;
  try {
    const RunLog log = read_run_log(LineSource::file(records.string()), WarmupOnly::leave_out);
    for (int64_t len : asked) {
      if (!log.point(len)) lacking.push_back(len);
    }
  } catch (const std::exception&) {
    return {fmt::format("done, but its records {} are not a sweep's", p.records), false};
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
  check("layers", value("--layers", "(all)"), std::to_string(w.layers));
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
      const auto [why, keep] = why_again(dir, p);
      s.run = s.again = !why.empty();
      s.why = why;
      s.sweep_resume = keep;
    } else {
      s.run = p.status != PartStatus::skipped;
      // A sweep cut short keeps what it measured: its --resume measures the rest.
      std::error_code ec;
      s.sweep_resume = s.run && p.name == "sweep" && fs::is_regular_file(fs::symlink_status(dir / p.records, ec)) &&
                       fs::file_size(dir / p.records, ec) > 0;
    }
    steps.push_back(s);
  }
  return steps;
}

std::string set_aside_records(const fs::path& dir, const ManifestPart& p) {
  std::error_code ec;
  const fs::path records = dir / p.records;
  if (!fs::exists(fs::symlink_status(records, ec))) return "";
  fs::create_directories(dir / "logs");
  const fs::path place = earlier_place(dir, p);
  fs::rename(records, place, ec);
  if (ec) {
    throw WorkError(fmt::format("suite: cannot move {}'s earlier records {} to {}: {}", p.name, records.string(),
                                place.string(), ec.message()));
  }
  return place.string();
}

}  // namespace ub::cli
