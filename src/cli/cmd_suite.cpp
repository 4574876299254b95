// `upgradebench suite --out DIR`: everything the decision needs, measured on this machine for one
// workload, into one folder (analysis/suite_plan.hpp says which parts and why): the plan printed
// first with each part's estimated time, fitted into --budget, then each part as its own process
// of this program, its records in the folder and its standard error kept in DIR/logs, the
// manifest rewritten after each part (records/suite_manifest.hpp). Ctrl-C stops after the part
// that runs and keeps everything finished; --resume runs what the manifest does not hold as done.
// `decide OLD_DIR NEW_DIR` reads two such folders.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/decompose/trace_decomposition.hpp"
#include "analysis/suite_plan.hpp"
#include "base/error.hpp"
#include "base/json_text.hpp"
#include "base/line_source.hpp"
#include "base/progress.hpp"
#include "cli/arguments.hpp"
#include "cli/child_process.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/gpu_binary.hpp"
#include "cli/interrupt.hpp"
#include "cli/measuring_shell.hpp"
#include "cli/output.hpp"
#include "cli/suite_resume.hpp"
#include "cli/train_options.hpp"
#include "records/measurement_set.hpp"
#include "records/readers/read_run.hpp"
#include "records/record_file.hpp"
#include "records/suite_manifest.hpp"
#include "report/format.hpp"

namespace ub::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct SuiteOptions {
  TrainOptions train;
  std::string seqlens = "8k,16k,32k,64k,128k";
  std::string dir, budget, ceiling;
  std::vector<std::string> traces;
  bool resume = false, no_find_max = false, dry_run = false;
  bool seqlens_given = false;  // --seqlens on the command line, not its default
  OutputOptions output;
};

std::string utc_now() { return utc_now_iso8601(); }

// This machine's GPUs as env.json says: their names (empty without a GPU).
std::vector<std::string> gpus_in(const fs::path& env) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::is_regular_file(env, ec)) return names;
  try {
    const json j = parse_json_text(read_json_file(env, "env's JSON"), env.string());
    for (const json& g : j.value("gpus", json::array())) names.push_back(g.value("name", ""));
  } catch (const std::exception&) {
    // an env.json that is not one: planned as a machine without a GPU named
  }
  return names;
}

SuiteWorkload workload_of(const TrainConfig& cfg, const SuiteOptions& o, const std::vector<int64_t>& seqlens) {
  SuiteWorkload w;
  w.model = o.train.model;
  w.layers = cfg.model.layers;
  w.batch = cfg.batch;
  w.seqlens = seqlens;
  w.checkpointing = cfg.checkpointing;
  w.master_weights = cfg.master_weights;
  w.mlp_tile = cfg.mlp_tile;
  w.loss_chunk = cfg.loss_chunk;
  w.train_args = o.train.given_as_arguments();
  return w;
}

std::string minutes(double s) { return s >= 90 ? fmt::format("{:.1f} min", s / 60) : fmt::format("{:.0f} s", s); }

report::Document plan_document(const SuitePlan& plan, const std::string& gpu, const std::optional<double>& budget) {
  report::Document doc;
  auto& b = doc.add(fmt::format("suite plan on {} (times estimated from its catalog figures{})",
                                gpu.empty() ? "an unknown GPU" : gpu, gpu.empty() ? ", taken as an H200" : ""));
  b.table.columns = {{"part"}, {"name", report::Align::left}, {"estimated"}, {"what", report::Align::left}};
  for (size_t i = 0; i < plan.parts.size(); ++i) {
    const SuitePart& p = plan.parts[i];
    b.table.add_row({std::to_string(i + 1), p.name, minutes(p.estimate_s), p.what});
  }
  b.notes.push_back(fmt::format("total about {}{}", minutes(plan.total_s()),
                                budget ? fmt::format(" (budget {})", minutes(*budget)) : ""));
  for (const std::string& d : plan.dropped) b.notes.push_back("left out to fit the budget: " + d);
  return doc;
}

// The longest and shortest lengths the sweep measured, of those it was asked for.
std::pair<std::optional<int64_t>, std::optional<int64_t>> measured_range(const fs::path& sweep,
                                                                        const std::vector<int64_t>& asked) {
  std::optional<int64_t> lo, hi;
  try {
    const RunLog log = read_run_log(LineSource::file(sweep.string()), WarmupOnly::leave_out);
    for (int64_t s : asked) {
      const RunPoint* p = log.point(s);
      if (!p || p->status != PointStatus::ok || !p->steps.has_steady()) continue;
      if (!lo) lo = s;
      hi = s;
    }
  } catch (const std::exception&) {
    // no sweep records: nothing to decompose
  }
  return {lo, hi};
}

// The decomposition's length set to what the sweep could run: the shortest and longest it measured.
void aim_decompositions(SuiteManifest& m, const fs::path& dir) {
  const auto [lo, hi] = measured_range(dir / "sweep.jsonl", m.workload.seqlens);
  for (ManifestPart& p : m.parts) {
    if (p.status == PartStatus::done || (p.name != "decompose-short" && p.name != "decompose-long")) continue;
    const std::optional<int64_t> at = p.name == "decompose-short" ? lo : hi;
    for (size_t i = 0; i + 1 < p.command.size(); ++i) {
      if (p.command[i] == "--seqlen" && at) p.command[i + 1] = std::to_string(*at);
    }
    if (!at) p.why = "the sweep measured no length", p.status = PartStatus::skipped;
    if (p.name == "decompose-long" && hi && lo && *hi == *lo) {
      p.why = "the sweep measured one length only", p.status = PartStatus::skipped;
    }
  }
}

ManifestPart part_of(const SuitePart& s) {
  ManifestPart p;
  p.name = s.name, p.what = s.what, p.records = s.records, p.estimate_s = s.estimate_s;
  p.command = s.args;
  if (!s.stdout_is_records) p.command.insert(p.command.end(), {"--out", s.records});
  return p;
}

// Whether part `p` writes its records to its standard output (env), not to an --out file.
bool records_on_stdout(const ManifestPart& p) { return p.command.size() < 2 || p.command[p.command.size() - 2] != "--out"; }

// The arguments part `p` runs with in `dir`: its command, its --out in the folder, the history
// database, and --resume for a sweep that continues its records.
std::vector<std::string> part_arguments(const Context& ctx, const fs::path& dir, const ManifestPart& p, bool sweep_resume) {
  std::vector<std::string> args;
  for (size_t i = 0; i < p.command.size(); ++i) {
    args.push_back(p.command[i]);
    if (i > 0 && p.command[i - 1] == "--out") args.back() = (dir / p.command[i]).string();
  }
  if (!ctx.history_db.empty() && !records_on_stdout(p)) args.insert(args.end(), {"--db", ctx.history_db});
  if (sweep_resume) args.push_back("--resume");
  return args;
}

// Runs part `p` in `dir`; updates it with what became of it. Records an earlier attempt left
// are moved aside first, but for a sweep resumed (it measures what they lack).
void run_part(Context& ctx, const fs::path& dir, ManifestPart& p, const std::atomic<bool>& interrupted,
              bool sweep_resume = false) {
  const bool to_stdout = records_on_stdout(p);
  const std::vector<std::string> args = part_arguments(ctx, dir, p, sweep_resume);
  if (!sweep_resume) {
    if (const std::string moved = set_aside_records(dir, p); !moved.empty()) {
      Progress().line(fmt::format("suite: {}'s earlier records kept as {}", p.name, moved));
    }
  }
  fs::create_directories(dir / "logs");
  p.started = utc_now();
  const auto t0 = std::chrono::steady_clock::now();
  const ChildRun r = run_this_program(args, to_stdout ? (dir / p.records).string() : "",
                                      fmt::format("suite: {}", p.name), (dir / "logs" / (p.name + ".log")).string());
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  p.exit_code = r.exit_code;
  if (r.exit_code == 0) {
    p.status = PartStatus::done, p.why.clear();
  } else if (r.exit_code == kExitInterrupted || interrupted.load()) {
    p.status = PartStatus::interrupted, p.why = "interrupted (Ctrl-C)";
  } else {
    p.status = PartStatus::failed;
    p.why = r.exit_code == kExitOutOfMemory ? "out of memory" : r.last_error.empty() ? fmt::format("exit code {}", r.exit_code) : r.last_error;
  }
}

report::Document summary(const SuiteManifest& m, const fs::path& dir) {
  report::Document doc;
  auto& b = doc.add(fmt::format("suite of {} ({} layers) in {}", m.workload.model, m.workload.layers, dir.string()));
  b.table.columns = {{"part", report::Align::left}, {"status", report::Align::left}, {"seconds"}, {"estimated"},
                     {"records", report::Align::left}, {"why", report::Align::left}};
  for (const ManifestPart& p : m.parts) {
    b.table.add_row({p.name, to_string(p.status), p.started.empty() ? "-" : report::num(p.seconds, 0),
                     report::num(p.estimate_s, 0), p.records, p.why});
  }
  for (const std::string& d : m.dropped) b.notes.push_back("left out to fit the budget: " + d);
  b.notes.push_back(fmt::format("manifest: {}; `upgradebench decide OLD_DIR NEW_DIR` compares two such folders",
                                (dir / "manifest.json").string()));
  return doc;
}

// Finished means `decide` can read the folder: what it would refuse is said here, not after the
// other machine's suite. WorkError naming what, and what to do.
void refuse_unreadable(const fs::path& dir) {
  try {
    (void)read_suite_folder(dir);
  } catch (const std::exception& e) {
    throw WorkError(fmt::format("suite: every part of {} is done, and decide cannot read the folder: {} (move the "
                                "part's records out of the folder, and `suite --resume` measures it again)",
                                dir.string(), e.what()));
  }
}

// What `--resume` would do with each part of the folder, for --dry-run: kept, or run with the
// command shown.
std::pair<report::Document, json> resume_document(const Context& ctx, const SuiteManifest& manifest,
                                                  const std::vector<ResumeStep>& steps, const fs::path& dir) {
  // The decompositions aimed at what the sweep's records hold, where the sweep does not run first.
  SuiteManifest m = manifest;
  const bool sweep_first = std::any_of(m.parts.begin(), m.parts.end(), [&](const ManifestPart& p) {
    return p.name == "sweep" && steps[static_cast<size_t>(&p - m.parts.data())].run;
  });
  if (!sweep_first) aim_decompositions(m, dir);
  report::Document doc;
  auto& b = doc.add(fmt::format("suite --resume in {}: what it would run", dir.string()));
  b.table.columns = {{"part", report::Align::left}, {"status", report::Align::left}, {"resume", report::Align::left},
                     {"estimated"}, {"command", report::Align::left}};
  json parts = json::array();
  double total = 0;
  size_t runs = 0;
  bool sweep_runs = false;
  for (size_t i = 0; i < m.parts.size(); ++i) {
    const ManifestPart& p = m.parts[i];
    const ResumeStep& s = steps[i];
    const char* action = !s.run ? "keep" : s.sweep_resume ? "continue" : s.again ? "run again" : "run";
    const std::vector<std::string> args = s.run ? part_arguments(ctx, dir, p, s.sweep_resume) : std::vector<std::string>{};
    b.table.add_row({p.name, to_string(p.status), action, s.run ? minutes(p.estimate_s) : "-",
                     s.run ? fmt::format("upgradebench {}", fmt::join(args, " ")) : "-"});
    if (!s.why.empty()) b.notes.push_back(fmt::format("{}: {}", p.name, s.why));
    if (s.run && p.name.rfind("decompose-", 0) == 0 && sweep_runs) {
      b.notes.push_back(fmt::format("{}: its --seqlen is set from the lengths the sweep measures", p.name));
    }
    sweep_runs = sweep_runs || (s.run && p.name == "sweep");
    total += s.run ? p.estimate_s : 0;
    runs += s.run;
    parts.push_back({{"name", p.name}, {"status", to_string(p.status)}, {"action", action}, {"why", s.why},
                     {"command", args}, {"estimate_s", s.run ? p.estimate_s : 0}});
  }
  b.notes.push_back(runs == 0 ? std::string("nothing would run: every part is done or skipped")
                              : fmt::format("{} of {} parts would run, about {}", runs, m.parts.size(), minutes(total)));
  return {std::move(doc), json{{"parts", parts}, {"total_s", total}}};
}

void run(Context& ctx, SuiteOptions& o) {
  if (o.dir.empty()) throw UsageError("suite: --out DIR names the folder the measurements go to");
  std::vector<int64_t> seqlens = parse_size_list(o.seqlens, "--seqlens");
  std::sort(seqlens.begin(), seqlens.end());
  seqlens.erase(std::unique(seqlens.begin(), seqlens.end()), seqlens.end());
  const TrainConfig cfg = train_config(ctx, o.train, seqlens.back());  // every length is checked by sweep's train
  for (int64_t s : seqlens) (void)train_config(ctx, o.train, s);
  const std::optional<double> budget =
      o.budget.empty() ? std::nullopt : std::optional<double>(parse_duration_seconds(o.budget, "--budget"));
  for (const std::string& t : o.traces) {
    if (!fs::exists(t)) throw UsageError(fmt::format("--trace {}: no such file or folder", t));
  }
  // A trace is a JSON object (torch.profiler's export): anything else would fail after the measuring.
  for (const std::string& t : trace::trace_files(o.traces)) {
    if (LineSource::file(t).first_nonblank().rfind('{', 0) != 0) {
      throw UsageError(fmt::format("--trace {}: not a torch.profiler trace (a JSON object, plain or gzip)", t));
    }
  }
  const fs::path dir = o.dir;
  const bool exists = fs::exists(dir);
  if (exists && !fs::is_directory(dir)) {
    throw UsageError(fmt::format("suite --out {}: a file, not a folder: the suite writes a folder of parts", dir.string()));
  }
  if (o.resume && !is_suite_folder(dir)) throw UsageError(fmt::format("--resume: {} is not a suite folder", dir.string()));
  if (!o.resume && exists && !fs::is_empty(dir)) {
    throw UsageError(fmt::format("suite: {} is not empty: give a new folder, or --resume to continue the suite in it",
                                 dir.string()));
  }
  const SuiteWorkload workload = workload_of(cfg, o, seqlens);
  SuiteManifest m;
  if (o.resume) {
    m = read_suite_manifest(dir);
    if (const std::string d = m.workload.differs_from(workload); !d.empty()) {
      throw UsageError(fmt::format("--resume: {} holds another workload ({}, the folder's vs these options'): resume "
                                   "with the same options", dir.string(), d));
    }
    // A resume measures the folder's lengths: others given are not measured, said (a new suite
    // measures them).
    if (o.seqlens_given && seqlens != m.workload.seqlens) {
      warn(fmt::format("--resume: {} measures its own lengths ({}), not --seqlens {}: a new suite in another folder "
                       "measures those", dir.string(), fmt::join(m.workload.seqlens, ","), fmt::join(seqlens, ",")));
    }
    // ... and runs its parts as the manifest recorded them: the plan's options are the first run's.
    std::vector<std::string> unused;
    if (!o.traces.empty()) unused.emplace_back("--trace");
    if (!o.budget.empty()) unused.emplace_back("--budget");
    if (!o.ceiling.empty()) unused.emplace_back("--find-max-ceiling");
    if (const ManifestPart* sweep = m.part("sweep")) {
      const bool found = std::find(sweep->command.begin(), sweep->command.end(), "--find-max") != sweep->command.end();
      if (found && o.no_find_max) unused.emplace_back("--no-find-max");
    }
    if (!unused.empty()) {
      warn(fmt::format("--resume: {} runs its parts as its manifest recorded them, so {} changes nothing: a new suite "
                       "in another folder plans with them", dir.string(), fmt::join(unused, ", ")));
    }
  }
  // What the resume runs: the parts not done, and the done ones the folder no longer backs.
  const std::vector<ResumeStep> steps = o.resume ? plan_resume(dir, m, cfg.model) : std::vector<ResumeStep>{};
  if (o.resume && o.dry_run) {
    const auto [doc, j] = resume_document(ctx, m, steps, dir);
    o.output.emit(doc, j);
    if (std::none_of(steps.begin(), steps.end(), [](const ResumeStep& s) { return s.run; })) refuse_unreadable(dir);
    return;
  }
  // What the resume runs, as its dry run says it (before the parts run again are marked pending).
  const std::string resume_shown =
      o.resume ? report::render_text(resume_document(ctx, m, steps, dir).first) : std::string();
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].run && (steps[i].again || m.parts[i].status == PartStatus::skipped)) {
      m.parts[i].status = PartStatus::pending, m.parts[i].why = steps[i].why;
    }
  }
  // A resumed suite whose every part is done or skipped measures nothing: it says where it stands
  // on any machine, one without the GPU side included.
  const bool all_done = o.resume && std::none_of(steps.begin(), steps.end(), [](const ResumeStep& s) { return s.run; });
  if (!o.dry_run && !all_done && !has_gpu_binary()) {
    std::vector<std::string> to_run;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].run) to_run.push_back(m.parts[i].name);
    }
    throw WorkError(fmt::format("suite: this build of upgradebench has no GPU side (nvcc was not found at build time, so "
                                "there is no upgradebench-gpu beside it): nothing can be measured here ({})",
                                o.resume ? fmt::format("the resume would run {}; --resume --dry-run says why",
                                                       fmt::join(to_run, ", "))
                                         : std::string("--dry-run prints the plan")));
  }
  if (!o.dry_run) fs::create_directories(dir);
  const std::atomic<bool>& interrupted = install_interrupt_handler();

  // The stack first: what the plan estimates for, and what `decide` checks the two machines share
  // (a dry run reads it into a scratch folder).
  const fs::path env_dir = o.dry_run ? fs::temp_directory_path() / fmt::format("upgradebench-suite-{}", ::getpid()) : dir;
  ManifestPart env = part_of({"env", "the stack fingerprint: GPU, driver, CUDA, cuBLASLt, cuDNN, NCCL", {"env", "--json"},
                              "env.json", true, 2});
  const ManifestPart* had = o.resume ? m.part("env") : nullptr;
  if (!(had && had->status == PartStatus::done)) run_part(ctx, env_dir, env, interrupted);
  const std::vector<std::string> gpus = gpus_in(env_dir / "env.json");
  if (o.dry_run) fs::remove_all(env_dir);
  if (gpus.empty() && !o.dry_run) {
    throw WorkError(fmt::format("suite: env found no GPU on this machine ({}): nothing to measure", (dir / "env.json").string()));
  }
  SuiteRequest req;
  req.train = cfg;
  // The workload always by name (the suite's default depth is not train's), then what was given.
  // The depth as it resolved (all layers, --layers 0, by their number): what the manifest holds.
  const std::vector<std::string> workload_args = {"--model", o.train.model, "--layers", std::to_string(cfg.model.layers)};
  req.train_args = workload_args;
  for (const std::string& a : o.train.given_as_arguments({"--model", "--layers"})) req.train_args.push_back(a);
  req.engine_args = workload_args;
  for (const std::string& a : o.train.given_as_arguments({"--model", "--layers", "--steps", "--breakdown", "--profile-steps"})) {
    req.engine_args.push_back(a);
  }
  req.seqlens = seqlens;
  req.find_max = !o.no_find_max;
  req.find_max_ceiling = o.ceiling.empty() ? 0 : parse_size(o.ceiling, "--find-max-ceiling");
  req.gpus = static_cast<int>(gpus.size());
  req.traces = o.traces;
  req.budget_s = budget;
  req.device = o.train.device;
  // The GPU the parts measure: --device's, where env lists it.
  const std::string gpu = static_cast<size_t>(req.device) < gpus.size() ? gpus[static_cast<size_t>(req.device)] : "";
  req.gpu = gpu.empty() ? nullptr : ctx.catalog().try_find(gpu);
  const SuitePlan plan = plan_suite(req);
  const report::Document shown = plan_document(plan, gpu, budget);
  if (o.dry_run) {
    json j = json::array();
    for (const SuitePart& p : plan.parts) j.push_back({{"name", p.name}, {"what", p.what}, {"command", p.args}, {"estimate_s", p.estimate_s}});
    o.output.emit(shown, {{"parts", j}, {"total_s", plan.total_s()}, {"dropped", plan.dropped}});
    return;
  }
  // A resume shows what it runs (the manifest's parts), not a plan of the options; nothing when
  // nothing runs.
  if (!o.resume) {
    std::fputs(report::render_text(shown).c_str(), stderr);
  } else if (!all_done) {
    std::fputs(resume_shown.c_str(), stderr);
  }
  if (!o.resume) {
    m.created = utc_now();
    m.argv = ctx.argv;
    m.workload = workload;
    m.budget_s = budget;
    m.dropped = plan.dropped;
    for (const SuitePart& s : plan.parts) m.parts.push_back(s.name == "env" ? env : part_of(s));
  } else {
    for (ManifestPart& p : m.parts) {
      if (p.name == "env" && p.status != PartStatus::done) p = env;
    }
  }
  m.updated = utc_now();
  write_suite_manifest(dir, m);

  Progress progress;
  int failed = 0;
  for (size_t i = 0; i < m.parts.size() && !interrupted.load(); ++i) {
    ManifestPart& p = m.parts[i];
    if (p.status == PartStatus::done || p.status == PartStatus::skipped) continue;
    if (p.name.rfind("decompose-", 0) == 0) {
      aim_decompositions(m, dir);
      if (p.status == PartStatus::skipped) {
        progress.line(fmt::format("suite: {} left out: {}", p.name, p.why));
        write_suite_manifest(dir, m);
        continue;
      }
    }
    progress.line(fmt::format("suite: part {} of {}: {} (about {}){}", i + 1, m.parts.size(), p.name,
                              minutes(p.estimate_s), p.why.empty() ? "" : ", run again: " + p.why));
    run_part(ctx, dir, p, interrupted, i < steps.size() && steps[i].sweep_resume);
    failed += p.status == PartStatus::failed;
    m.updated = utc_now();
    write_suite_manifest(dir, m);
    progress.line(fmt::format("suite: {} {} in {}{}", p.name, to_string(p.status), minutes(p.seconds),
                              p.why.empty() ? "" : ": " + p.why));
  }
  json j = m;
  o.output.emit(summary(m, dir), j);
  if (interrupted.load()) {
    ctx.exit_code = kExitInterrupted;
  } else if (failed > 0) {
    throw WorkError(fmt::format("suite: {} part(s) failed (their logs are in {}); `--resume` runs them again", failed,
                                (dir / "logs").string()));
  } else if (m.complete()) {
    refuse_unreadable(dir);
  }
}

}  // namespace

void register_suite(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<SuiteOptions>();
  auto* cmd = app.add_subcommand("suite", "Everything the decision needs, measured on this machine for one workload, "
                                          "into one folder (then `decide OLD_DIR NEW_DIR`)");
  cmd->add_option("-o,--out", o->dir, "The folder the measurements go to (new, or the one to --resume)")->required();
  CLI::Option* seqlens =
      cmd->add_option("--seqlens,--seqlen", o->seqlens, "Sequence lengths of the sweep and of attention (k = 1024)")
          ->capture_default_str();
  o->train.layers = 4;  // the guide's slice of a model that fits one GPU
  o->train.add_to(*cmd, {.seqlen = false, .parallel = false, .breakdown = false});
  cmd->add_option("--budget", o->budget, "Fit the plan into this time (30m, 1h30m, 900s), leaving out what it must");
  cmd->add_flag("--no-find-max", o->no_find_max, "Do not look for the longest length that fits");
  cmd->add_option("--find-max-ceiling", o->ceiling, "The longest length --find-max tries");
  cmd->add_option("--trace", o->traces, "A torch.profiler trace of your own step to decompose too (repeatable)");
  cmd->add_flag("--resume", o->resume, "Continue the suite in --out: run what its manifest does not hold as done");
  cmd->add_flag("--dry-run", o->dry_run, "Print the plan and its estimates, measure nothing");
  o->output.add_to(*cmd);
  cmd->add_option("--db", ctx.history_db, "Also add every part's records to this history database");
  cmd->callback([&ctx, o, seqlens] {
    o->seqlens_given = seqlens->count() > 0;
    run(ctx, *o);
  });
}

}  // namespace ub::cli
