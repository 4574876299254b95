// `upgradebench sweep`: the training step over sequence lengths into one records file, each
// point its own `train` process (this binary), so a point that runs out of memory, or crashes
// the GPU context, is recorded and the sweep goes on. Records are appended and flushed by the
// child as they are measured: an interrupted sweep keeps every finished step, and `--resume`
// runs only the lengths the file does not hold yet. `--find-max` then bisects on the out-of-
// memory boundary for the longest length that fits (analysis/sweep_plan.hpp).
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>

#include "analysis/compare.hpp"
#include "analysis/sweep_plan.hpp"
#include "cli/output.hpp"
#include "base/error.hpp"
#include "cli/arguments.hpp"
#include "cli/child_process.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/interrupt.hpp"
#include "cli/measuring_shell.hpp"
#include "cli/train_options.hpp"
#include "facts/memfit.hpp"
#include "records/readers/read_run.hpp"
#include "records/record_file.hpp"
#include "records/run_log.hpp"
#include "records/train_records.hpp"
#include "records/workload_keys.hpp"
#include "report/format.hpp"

namespace ub::cli {

namespace {

using nlohmann::json;

struct SweepOptions {
  TrainOptions train;  // every option of `train` but --seqlen, with its defaults
  std::string seqlens = "8k,16k,32k";
  bool resume = false, find_max = false;
  int probe_steps = 0;  // --find-max-steps: timed steps of a bisection's length (0: --steps)
  std::string granularity = "1k", ceiling = "4M";
  ShellOptions shell;
};

// "" when `out` holds steady steps of `seqlen`, else why not.
std::string unreadable_point(const std::string& out, int64_t seqlen) {
  try {
    const RunLog log = read_run_log(LineSource::file(out), WarmupOnly::leave_out);
    const RunPoint* p = log.point(seqlen);
    if (!p || !p->steps.has_steady()) return fmt::format("{} holds no steady step of it", out);
    return "";
  } catch (const std::exception& e) {
    return fmt::format("its records cannot be read back ({})", e.what());
  }
}

// memfit's longest length on the run's GPU from the lengths measured so far (a least-squares
// line of peak memory against tokens, the catalog's usable capacity); none without two measured
// lengths, a GPU the catalog knows, or memory that grows.
std::optional<int64_t> predicted_longest(Context& ctx, const std::string& out) {
  if (!std::filesystem::exists(out)) return std::nullopt;  // nothing measured yet
  try {
    const RunLog log = read_run_log(LineSource::file(out), WarmupOnly::leave_out);
    const auto pts = memory_points(log);
    if (pts.size() < 2) return std::nullopt;
    const Accelerator* gpu = ctx.catalog().try_find(log.gpu);
    const std::optional<double> capacity = gpu ? gpu->capacity_gib() : std::nullopt;
    if (!capacity) return std::nullopt;
    return fit_memory(pts, out).max_seqlen(*capacity, log.batch);
  } catch (const std::exception&) {
    return std::nullopt;  // no fit (fewer than two lengths, a file with no run): bisect without one
  }
}

// A bisection's length only has to show whether it fits: --find-max-steps timed steps after one
// warm-up step (the first step tunes the GEMMs and attention: its time is not the step's), or
// after none with --warmup 0 (a full model's step at the longest lengths takes minutes).
int probe_warmup(const SweepOptions& o) { return std::min(o.train.warmup, 1); }

// Runs `train` for one length with the options the sweep was given (the child declares them as
// `train` does, so what was not given keeps the same default); returns its exit code (130:
// interrupted).
int run_point(const SweepOptions& o, int64_t seqlen, const std::string& out, const std::string& db, bool probe) {
  std::vector<std::string> args = {"train"};
  const bool short_probe = probe && o.probe_steps > 0;
  for (const std::string& a : o.train.given_as_arguments(short_probe ? std::set<std::string>{"--steps", "--warmup"}
                                                                     : std::set<std::string>{})) {
    args.push_back(a);
  }
  if (short_probe) {
    args.insert(args.end(), {"--steps", std::to_string(o.probe_steps), "--warmup", std::to_string(probe_warmup(o))});
  }
  args.insert(args.end(), {"--seqlen", std::to_string(seqlen), "--out", out});
  if (!db.empty()) args.insert(args.end(), {"--db", db});  // each length's run goes in as it is measured
  return run_this_program(args, "", fmt::format("sweep: train for seqlen {}", seqlen)).exit_code;  // records: the file
}

// The keys of a training run's configuration that say which workload it measured: a file
// resumed must hold the same.
nlohmann::json workload_keys(const TrainConfig& cfg) {
  const json all = cfg;
  json keys;
  for (const char* k : {"model", "layers", "batch"}) keys[k] = all.at(k);
  for (const char* k : kOurLeverKeys) keys[k] = all.at(k);
  for (const char* k : kOurStepKeys) keys[k] = all.at(k);
  return keys;
}

const char* outcome_name(PointOutcome o) {
  switch (o) {
    case PointOutcome::measured: return "measured";
    case PointOutcome::oom: return "out of memory";
    case PointOutcome::failed: return "failed";
  }
  return "?";
}

void run(Context& ctx, const SweepOptions& o) {
  // Everything a child would refuse is refused here first, before any GPU is touched: each
  // length's configuration is the one its `train` will build.
  const std::vector<int64_t> lengths = parse_size_list(o.seqlens, "--seqlens");
  std::optional<TrainConfig> cfg;
  for (int64_t s : lengths) cfg = train_config(ctx, o.train, s);
  const int64_t granularity = parse_size(o.granularity, "--find-max-granularity");
  const int64_t ceiling = parse_size(o.ceiling, "--find-max-ceiling");
  if (o.resume && o.shell.out.empty()) throw UsageError("--resume needs --out: the records file to continue");
  if (o.probe_steps < 0 || o.probe_steps > 100000) {
    throw UsageError(fmt::format("--find-max-steps {} is out of range (0..100000; 0: as --steps)", o.probe_steps));
  }
  const std::string out = records_path("sweep", o.shell.out);
  const std::atomic<bool>& interrupted = install_interrupt_handler();

  if (o.resume) {
    if (const std::string why = resume_mismatch(out, workload_keys(*cfg)); !why.empty()) {
      throw UsageError(fmt::format("--resume: {} holds another workload ({}): resume with the same options, or "
                                   "write to another --out", out, why));
    }
    // What it holds is shown as measured: held to what `report` and `compare` hold it to (a step
    // past the GPU's peak, a peak memory past what it holds). Lines it cannot read run again.
    std::optional<RunLog> held;
    try {
      if (std::filesystem::exists(out)) held = read_run_log(LineSource::file(out), WarmupOnly::leave_out);
    } catch (const std::exception&) {
      // nothing measured yet, or damaged lines: sweep_outcomes says which, and their points run again
    }
    if (held) refuse_impossible_run(*held, ctx.catalog(), ctx.data_dir() / "models");
  }
  // A length the bisection tried holds --find-max-steps steps: enough to count as measured.
  const int steps_held = o.probe_steps > 0 ? std::min(o.train.steps, o.probe_steps) : o.train.steps;
  std::vector<std::string> skipped;  // lines of the records file --resume could not read: their points run again
  std::map<int64_t, PointOutcome> done = o.resume ? sweep_outcomes(out, steps_held, &skipped) : std::map<int64_t, PointOutcome>{};
  warn_about_lines(skipped, out);
  std::set<int64_t> asked;  // the lengths this sweep ran or was given: the others in the file are only shown
  auto measure = [&](int64_t s, bool probe) -> PointOutcome {
    asked.insert(s);
    if (auto it = done.find(s); it != done.end() && it->second != PointOutcome::failed) {
      std::fprintf(stderr, "seqlen %lld: %s already in %s\n", static_cast<long long>(s), outcome_name(it->second), out.c_str());
      return it->second;
    }
    if (probe && o.probe_steps > 0) {
      std::fprintf(stderr, "seqlen %lld: train (probe: %d warm-up + %d timed step(s))\n", static_cast<long long>(s),
                   probe_warmup(o), o.probe_steps);
    } else {
      std::fprintf(stderr, "seqlen %lld: train\n", static_cast<long long>(s));
    }
    std::error_code ec;
    const auto size_before = std::filesystem::file_size(out, ec);
    const bool was_there = !ec;
    const int rc = run_point(o, s, out, ctx.history_db, probe);
    if (rc == 130 || interrupted.load()) return done[s] = PointOutcome::failed;
    // A child that failed before writing its first record (no usable GPU, a device that is not
    // there) failed for every length: the sweep stops instead of starting one child per length.
    const auto size_after = std::filesystem::file_size(out, ec);
    if (rc != 0 && rc != kExitOutOfMemory && (ec || (was_there && size_after == size_before))) {
      throw WorkError(fmt::format("sweep: train for seqlen {} failed before measuring anything (said above), as every "
                                  "length would: the sweep stops{}", s, was_there ? fmt::format("; {} is as it was", out) : ""));
    }
    if (rc == 0) {
      // Measured only when the file holds its steps: `sweep` never reports a point it cannot read.
      if (const std::string why = unreadable_point(out, s); !why.empty()) {
        std::fprintf(stderr, "seqlen %lld: train finished but %s: counted as failed\n", static_cast<long long>(s), why.c_str());
        return done[s] = PointOutcome::failed;
      }
      return done[s] = PointOutcome::measured;
    }
    return done[s] = rc == kExitOutOfMemory ? PointOutcome::oom : PointOutcome::failed;
  };
  for (int64_t s : lengths) {
    if (interrupted.load()) break;
    measure(s, false);
  }
  std::optional<int64_t> longest, shortest_oom;
  if (o.find_max && !interrupted.load()) {
    MaxFitSearch search(granularity, ceiling);
    for (const auto& [s, outcome] : done) {
      if (outcome == PointOutcome::measured) search.fits(s);
      if (outcome == PointOutcome::oom) search.does_not_fit(s);
    }
    if (const auto aim = predicted_longest(ctx, out)) {
      std::fprintf(stderr, "find-max: the memory fit of the measured lengths predicts %lld tokens; probing there first\n",
                   static_cast<long long>(*aim));
      search.aim(*aim);
    }
    while (auto next = search.next()) {
      if (interrupted.load()) break;
      const PointOutcome r = measure(*next, true);
      if (r == PointOutcome::measured) search.fits(*next);
      else if (r == PointOutcome::oom) search.does_not_fit(*next);
      else break;  // a failure that is not memory: bisection cannot go on
    }
    longest = search.longest_fit(), shortest_oom = search.shortest_failure();
    // An interrupted search has a lower bound, not a boundary: no result record claims one.
    if (!interrupted.load()) {
      RecordWriter(out).write(SweepMax{longest, shortest_oom, granularity});
      add_file_to_history(ctx, out);  // the result joins the last length's run there
    }
  }

  // The summary, read back from the records file (what compare and report will see).
  report::Document doc;
  const TrainOptions& t = o.train;
  auto& b = doc.add(fmt::format("sweep of {}{}: {}", t.model, t.layers ? fmt::format(" ({} layers)", t.layers) : "", out));
  b.table.columns = {{"seqlen"}, {"outcome", report::Align::left}, {"TFLOPS"}, {"step ms"}, {"peak GiB"}};
  json j = {{"records", out}, {"points", json::array()}};
  std::optional<RunLog> log;
  if (std::filesystem::exists(out)) {
    try {
      log = read_run_log(LineSource::file(out), WarmupOnly::leave_out);
    } catch (const std::exception&) {
      // nothing measured yet (every point failed): the table says so below
    }
  }
  // A length of an earlier sweep in the file, not given now, is shown as the file holds it: measured
  // with whatever steps it has (a find-max probe's one), never a failure of this sweep.
  const std::map<int64_t, PointOutcome> as_held = sweep_outcomes(out, 1);
  int failed = 0;
  for (auto [s, outcome] : done) {
    if (!asked.count(s)) {
      if (const auto it = as_held.find(s); it != as_held.end()) outcome = it->second;
    }
    std::string tf = "-", ms = "-", gib = "-";
    json pj = {{"seqlen", s}, {"outcome", outcome_name(outcome)}};
    if (const RunPoint* p = log ? log->point(s) : nullptr; p && outcome == PointOutcome::measured && p->steps.has_steady()) {
      const PointStats st = point_stats(*log, *p);
      ms = report::num(st.time_ms.median, 1);
      pj["step_ms"] = st.time_ms.median;
      if (st.tflops) tf = report::num(st.tflops->median), pj["tflops"] = st.tflops->median;
      if (st.peak_mem_gib) gib = report::num(*st.peak_mem_gib, 2), pj["peak_mem_gib"] = *st.peak_mem_gib;
    }
    failed += outcome == PointOutcome::failed && asked.count(s);
    b.table.add_row({std::to_string(s), outcome_name(outcome), tf, ms, gib});
    j["points"].push_back(pj);
  }
  if (o.find_max && interrupted.load()) {
    b.notes.push_back(longest ? fmt::format("find-max interrupted: {} tokens fit, the longest is not known (--resume "
                                            "--find-max goes on)", *longest)
                              : "find-max interrupted before any length fitted");
    j["longest_fit"] = json();
  } else if (o.find_max) {
    const std::string beyond = shortest_oom ? fmt::format(" ({} does not)", *shortest_oom)
                               : longest && *longest + granularity > ceiling
                                   ? " (--find-max-ceiling: longer lengths were not tried)"
                                   : "";
    b.notes.push_back(longest ? fmt::format("longest length that fits: {} tokens{}", *longest, beyond) : "no length fitted");
    j["longest_fit"] = longest ? json(*longest) : json();
  }
  o.shell.output.emit(doc, j);
  if (interrupted.load()) {
    ctx.exit_code = kExitInterrupted;
  } else if (failed > 0) {
    throw WorkError(fmt::format("sweep: {} point(s) failed (not out of memory); see the train_error records and the "
                                "messages above; `--resume` retries them", failed));
  }
}

}  // namespace

void register_sweep(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<SweepOptions>();
  auto* cmd = app.add_subcommand("sweep", "The training step over sequence lengths into one records file "
                                          "(each point its own `train` process, with every train option; "
                                          "--resume, --find-max)");
  cmd->add_option("--seqlens,--seqlen", o->seqlens, "Sequence lengths (k = 1024)")->capture_default_str();
  o->train.add_to(*cmd, {.seqlen = false});
  cmd->add_flag("--resume", o->resume, "Skip the lengths --out already holds (measured or out of memory)");
  cmd->add_flag("--find-max", o->find_max, "Then bisect for the longest length that fits");
  cmd->add_option("--find-max-granularity", o->granularity, "Stop when the boundary is known to this many tokens")
      ->capture_default_str();
  cmd->add_option("--find-max-ceiling", o->ceiling, "Do not try lengths beyond this")->capture_default_str();
  cmd->add_option("--find-max-steps", o->probe_steps,
                  "Timed steps of each length the bisection tries, after one warm-up step (0: as --steps)")
      ->capture_default_str();
  add_shell_options(*cmd, ctx, o->shell, "sweep", {});
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
