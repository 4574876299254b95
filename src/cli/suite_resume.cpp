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
#include <CLI/CLI.hpp>

#include "analysis/suite_plan.hpp"
#include "cli/arguments.hpp"
#include "cli/train_options.hpp"
#include "records/suite_part_backing.hpp"

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

// How many of the lengths `asked` the sweep's records measured (steady steps).
size_t measured_lengths(const fs::path& records, const std::vector<int64_t>& asked) {
  const std::optional<RunLog> log = read_sweep_records(records);
  if (!log) return 0;
  size_t n = 0;
  for (int64_t len : asked) {
    const RunPoint* p = log->point(len);
    n += p && p->status == PointStatus::ok && p->steps.has_steady();
  }
  return n;
}

// The options a training step's command may carry in a suite: every `train` option `suite`
// accepts, as declared (not the data-parallel ones, not --seqlen, not --breakdown).
const std::set<std::string>& training_options() {
  static const std::set<std::string> names = [] {
    CLI::App app;
    TrainOptions t;
    t.add_to(app, {.seqlen = false, .parallel = false, .breakdown = false});
    std::set<std::string> n;
    for (const CLI::Option* o : app.get_options()) {
      for (const std::string& l : o->get_lnames()) n.insert("--" + l);
    }
    return n;
  }();
  return names;
}

// What a part of its name runs: its subcommand, the options it may carry, whether it takes a
// positional argument (a trace). Empty `verb` for a name no suite gives a part.
struct PartKind {
  std::string verb;
  std::set<std::string> options;
  bool training = false, positional = false;
};

PartKind kind_of(const std::string& name) {
  if (name == "env") return {"env", {"--json"}};
  if (name == "mamf") return {"mamf", {"--devices", "--out"}};
  if (name == "mamf-step") {
    return {"mamf", {"--shapes-of", "--seqlen", "--layers", "--batch", "--checkpointing", "--mlp-tile", "--loss-chunk",
                     "--devices", "--out"}};
  }
  if (name == "bandwidth") return {"bandwidth", {"--sizes", "--devices", "--out"}};
  if (name == "attention") {
    return {"attention", {"--seqlens", "--heads", "--kv-heads", "--head-dim", "--batch", "--window", "--devices", "--out"}};
  }
  if (name == "sweep") {
    return {"sweep", {"--seqlens", "--find-max", "--find-max-steps", "--find-max-ceiling", "--find-max-granularity", "--out"},
            true};
  }
  if (name == "decompose-short" || name == "decompose-long") return {"decompose", {"--seqlen", "--steps", "--out"}, true};
  if (name == "nccl") return {"nccl", {"--gpus", "--out"}};
  if (name.rfind("trace-", 0) == 0) return {"decompose", {"--out"}, false, true};
  return {};
}

// "" when `p`'s command is one its kind of part runs (its subcommand, its options, --out its own
// records in the folder, the model's attention shape), else what is not.
std::string not_of_its_kind(const ManifestPart& p, const ModelShape& model) {
  const PartKind k = kind_of(p.name);
  if (k.verb.empty()) return fmt::format("no suite has a part named {}", printable(p.name));
  if (const std::string own = p.name == "env" ? "env.json" : p.name + ".jsonl"; p.records != own) {
    return fmt::format("its records {} are not its own {}", printable(p.records), own);
  }
  if (p.command.empty() || p.command.front() != k.verb) {
    return fmt::format("it runs `{}`, where a part named {} runs `{}`", p.command.empty() ? "" : printable(p.command.front()),
                       p.name, k.verb);
  }
  size_t positional = 0, outs = 0;
  for (size_t i = 1; i < p.command.size(); ++i) {
    const std::string& a = p.command[i];
    if (a.rfind("--", 0) != 0) {
      ++positional;
      continue;
    }
    const std::string name = a.substr(0, a.find('='));
    if (!k.options.count(name) && !(k.training && training_options().count(name))) {
      return fmt::format("it gives {}, an option a part named {} never runs with", printable(name), p.name);
    }
    if (name == "--out") {
      ++outs;
      const std::string to = a.find('=') != std::string::npos ? a.substr(a.find('=') + 1)
                             : i + 1 < p.command.size()      ? p.command[i + 1]
                                                             : "";
      if (to != p.records) return fmt::format("its --out {} is not its records {}", printable(to), printable(p.records));
    }
    // The option's value, where it takes one, is the next argument: not positional.
    if (a.find('=') == std::string::npos && i + 1 < p.command.size() && p.command[i + 1].rfind("--", 0) != 0 &&
        !flags().count(name) && name != "--json" && name != "--find-max") {
      ++i;
    }
  }
  if (positional != (k.positional ? 1u : 0u)) return fmt::format("it gives {} argument(s) that are no option", positional);
  if (outs != (p.name == "env" ? 0u : 1u)) return fmt::format("it names its records with --out {} times", outs);
  if (p.name == "attention") {
    const std::map<std::string, std::string> o = options_of(p.command);
    const auto value = [&](const char* n, const std::string& absent) {
      const auto it = o.find(n);
      return it == o.end() ? absent : it->second;
    };
    const int64_t window = attention_window(model);
    for (const auto& [name, want] : {std::pair<const char*, int64_t>{"--heads", model.heads}, {"--kv-heads", model.kv_heads},
                                     {"--head-dim", model.head_dim}, {"--window", window}}) {
      if (value(name, "0") != std::to_string(want)) {
        return fmt::format("its {} {} is not the model's {}", name, printable(value(name, "(none)")), want);
      }
    }
  }
  return "";
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

std::vector<ResumeStep> plan_resume(const fs::path& dir, const SuiteManifest& m, const ModelShape& model) {
  std::vector<ResumeStep> steps;
  for (const ManifestPart& p : m.parts) {
    if (const std::string why = not_of_its_kind(p, model); !why.empty()) {
      throw WorkError(fmt::format("--resume: {}: part {}'s command is not one a suite runs ({}): the manifest was edited; "
                                  "start a new suite folder", (dir / "manifest.json").string(), printable(p.name), why));
    }
    if (const std::string d = command_departs(p.command, m.workload); !d.empty()) {
      throw WorkError(fmt::format("--resume: {}: part {}'s command runs another workload than the manifest's ({}, the "
                                  "command's, then the workload's): the manifest was edited; start a new suite folder",
                                  (dir / "manifest.json").string(), p.name, d));
    }
    ResumeStep s;
    if (p.status == PartStatus::done) {
      // What the folder no longer backs runs again; a sweep's records of the workload are continued.
      const PartBacking b = backing_of(dir, p, m.workload);
      s.run = s.again = b.damage != PartDamage::none;
      s.why = s.run ? "done, but " + b.why : "";
      s.sweep_resume = b.records_continue;
    } else {
      s.run = p.status != PartStatus::skipped;
      // A sweep cut short keeps what it measured, where that is of the workload: its --resume
      // measures the rest. Records it cannot continue are moved aside, and it starts again.
      std::error_code ec;
      const fs::path records = dir / p.records;
      if (s.run && p.name == "sweep" && fs::is_regular_file(fs::symlink_status(records, ec)) &&
          !LineSource::file(records.string()).first_nonblank().empty()) {
        s.why = sweep_not_continued(dir, p, m.workload);
        s.sweep_resume = s.why.empty();
      }
    }
    steps.push_back(s);
  }
  // A decomposition left out for want of a length the sweep measured is aimed again once the sweep
  // has run again, or where its records now hold the lengths.
  const auto sweep = std::find_if(m.parts.begin(), m.parts.end(), [](const ManifestPart& p) { return p.name == "sweep"; });
  if (sweep == m.parts.end()) return steps;
  const bool sweep_runs = steps[static_cast<size_t>(sweep - m.parts.begin())].run;
  const size_t measured = sweep_runs ? 0 : measured_lengths(dir / sweep->records, sweep->lengths_asked());
  for (size_t i = 0; i < m.parts.size(); ++i) {
    const ManifestPart& p = m.parts[i];
    if (p.status != PartStatus::skipped || p.name.rfind("decompose-", 0) != 0) continue;
    const size_t wanted = p.name == "decompose-long" ? 2 : 1;
    if (sweep_runs || measured >= wanted) {
      steps[i].run = true;
      steps[i].why = sweep_runs ? "left out for want of a length; aimed again after the sweep"
                                : "left out for want of a length, which the sweep's records now hold";
    }
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
