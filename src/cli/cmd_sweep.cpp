// `upgradebench sweep`: the training step over sequence lengths into one records file, each
// point its own `train` process (this binary), so a point that runs out of memory, or crashes
// the GPU context, is recorded and the sweep goes on. Records are appended and flushed by the
// child as they are measured: an interrupted sweep keeps every finished step, and `--resume`
// runs only the lengths the file does not hold yet. `--find-max` then bisects on the out-of-
// memory boundary for the longest length that fits (analysis/sweep_plan.hpp).
#include <fmt/format.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "analysis/sweep_plan.hpp"
#include "base/error.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/interrupt.hpp"
#include "cli/output.hpp"
#include "cli/run_inputs.hpp"
#include "facts/memfit.hpp"
#include "model/llama_layout.hpp"
#include "records/readers/read_run.hpp"
#include "records/record_file.hpp"
#include "records/run_log.hpp"
#include "records/train_records.hpp"
#include "report/format.hpp"

extern char** environ;

namespace ub::cli {

namespace {

using nlohmann::json;

struct SweepOptions {
  std::string model = "llama-3.1-8b";
  int64_t layers = 0, batch = 1;
  std::string seqlens = "8k,16k,32k";
  int steps = 5, warmup = 2;
  std::string precision = "master", loss_chunk = "0";
  bool checkpointing = false, selective = false, no_autotune = false, breakdown = false;
  std::string mlp_tile = "0";
  int zero = 0;
  bool offload_optimizer = false;
  std::string bucket = "0", gpus;
  bool resume = false, find_max = false;
  std::string granularity = "1k", ceiling = "4M";
  int device = 0;
  std::string out;
  OutputOptions output;
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
    return fit_memory(pts).max_seqlen(*capacity, log.batch);
  } catch (const std::exception&) {
    return std::nullopt;  // no fit (fewer than two lengths, a file with no run): bisect without one
  }
}

// Runs `train` for one length; returns its exit code (130: interrupted).
int run_point(const SweepOptions& o, int64_t seqlen, const std::string& out, const std::string& db) {
  // This very binary (argv[0] its real path, so the child's context record names it).
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  std::vector<std::string> args = {ec ? std::string("upgradebench") : self, "train", "--model", o.model, "--layers", std::to_string(o.layers),
                                   "--batch", std::to_string(o.batch), "--seqlen", std::to_string(seqlen),
                                   "--steps", std::to_string(o.steps), "--warmup", std::to_string(o.warmup),
                                   "--precision", o.precision, "--loss-chunk", o.loss_chunk,
                                   "--device", std::to_string(o.device), "--out", out};
  if (o.checkpointing) args.push_back("--checkpointing");
  if (o.selective) args.push_back("--selective-checkpointing");
  if (o.mlp_tile != "0") args.insert(args.end(), {"--mlp-tile", o.mlp_tile});
  if (o.zero) args.insert(args.end(), {"--zero", std::to_string(o.zero)});
  if (o.offload_optimizer) args.push_back("--offload-optimizer");
  if (o.bucket != "0") args.insert(args.end(), {"--bucket", o.bucket});
  if (!o.gpus.empty()) args.insert(args.end(), {"--gpus", o.gpus});
  if (o.no_autotune) args.push_back("--no-autotune");
  if (o.breakdown) args.push_back("--breakdown");
  if (!db.empty()) args.insert(args.end(), {"--db", db});  // each length's run goes in as it is measured
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);  // records go to the file
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw WorkError(fmt::format("sweep: cannot start train for seqlen {}: {}", seqlen, std::strerror(rc)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
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
  // Everything the child would refuse is refused here first, before any GPU is touched.
  (void)ctx.model(o.model, o.layers);
  std::vector<int64_t> lengths = parse_size_list(o.seqlens, "--seqlens");
  const int64_t granularity = parse_size(o.granularity, "--find-max-granularity");
  const int64_t ceiling = parse_size(o.ceiling, "--find-max-ceiling");
  check_step_options(o.zero, o.offload_optimizer, parse_master_weights(o.precision), o.checkpointing || o.selective,
                     o.selective, o.mlp_tile == "0" ? 0 : parse_size(o.mlp_tile, "--mlp-tile"));
  if (o.bucket != "0") (void)parse_size(o.bucket, "--bucket");
  if (o.resume && o.out.empty()) throw UsageError("--resume needs --out: the records file to continue");
  const std::string out = o.out.empty() ? fmt::format("upgradebench-sweep-{}.jsonl", utc_now_compact()) : o.out;
  const std::atomic<bool>& interrupted = install_interrupt_handler();

  if (o.resume) {
    // The file must hold this workload: the keys the child's context writes that decide it.
    const ModelShape m = ctx.model(o.model, o.layers);
    const nlohmann::json expected = {{"model", o.model},
                                     {"layers", m.layers},
                                     {"batch", o.batch},
                                     {"master_weights", parse_master_weights(o.precision)},
                                     {"activation_checkpointing", o.checkpointing || o.selective},
                                     {"loss_chunk", o.loss_chunk == "0" ? 0 : parse_size(o.loss_chunk, "--loss-chunk")},
                                     {"mlp_tile", o.mlp_tile == "0" ? 0 : parse_size(o.mlp_tile, "--mlp-tile")},
                                     {"zero_stage", o.zero},
                                     {"offload_optimizer", o.offload_optimizer}};
    if (const std::string why = resume_mismatch(out, expected); !why.empty()) {
      throw UsageError(fmt::format("--resume: {} holds another workload ({}): resume with the same options, or "
                                   "write to another --out", out, why));
    }
  }
  std::map<int64_t, PointOutcome> done = o.resume ? sweep_outcomes(out, o.steps) : std::map<int64_t, PointOutcome>{};
  auto measure = [&](int64_t s) -> PointOutcome {
    if (auto it = done.find(s); it != done.end() && it->second != PointOutcome::failed) {
      std::fprintf(stderr, "seqlen %lld: %s already in %s\n", static_cast<long long>(s), outcome_name(it->second), out.c_str());
      return it->second;
    }
    std::fprintf(stderr, "seqlen %lld: train\n", static_cast<long long>(s));
    const int rc = run_point(o, s, out, ctx.history_db);
    if (rc == 130 || interrupted.load()) return done[s] = PointOutcome::failed;
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
    measure(s);
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
      const PointOutcome r = measure(*next);
      if (r == PointOutcome::measured) search.fits(*next);
      else if (r == PointOutcome::oom) search.does_not_fit(*next);
      else break;  // a failure that is not memory: bisection cannot go on
    }
    longest = search.longest_fit(), shortest_oom = search.shortest_failure();
    RecordWriter(out).write(SweepMax{longest, shortest_oom, granularity});
  }

  // The summary, read back from the records file (what compare and report will see).
  report::Document doc;
  auto& b = doc.add(fmt::format("sweep of {}{}: {}", o.model, o.layers ? fmt::format(" ({} layers)", o.layers) : "", out));
  b.table.columns = {{"seqlen"}, {"outcome", report::Align::left}, {"TFLOPS"}, {"step ms"}, {"peak GiB"}};
  json j = {{"records", out}, {"points", json::array()}};
  std::optional<RunLog> log;
  if (std::filesystem::exists(out)) {
    try {
      log = read_run_log(LineSource::file(out), WarmupOnly::leave_out);
    } catch (const WorkError&) {
      // nothing measured yet (every point failed): the table says so below
    }
  }
  int failed = 0;
  for (const auto& [s, outcome] : done) {
    std::string tf = "-", ms = "-", gib = "-";
    json pj = {{"seqlen", s}, {"outcome", outcome_name(outcome)}};
    if (const RunPoint* p = log ? log->point(s) : nullptr; p && outcome == PointOutcome::measured && p->steps.has_steady()) {
      const PointStats st = point_stats(*log, *p);
      ms = report::num(st.time_ms.median, 1);
      pj["step_ms"] = st.time_ms.median;
      if (st.tflops) tf = report::num(st.tflops->median), pj["tflops"] = st.tflops->median;
      if (st.peak_mem_gib) gib = report::num(*st.peak_mem_gib, 2), pj["peak_mem_gib"] = *st.peak_mem_gib;
    }
    failed += outcome == PointOutcome::failed;
    b.table.add_row({std::to_string(s), outcome_name(outcome), tf, ms, gib});
    j["points"].push_back(pj);
  }
  if (o.find_max) {
    b.notes.push_back(longest ? fmt::format("longest length that fits: {} tokens{}", *longest,
                                            shortest_oom ? fmt::format(" ({} does not)", *shortest_oom) : "")
                              : "no length fitted");
    j["longest_fit"] = longest ? json(*longest) : json();
  }
  o.output.emit(doc, j);
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
                                          "(each point its own process; --resume, --find-max)");
  cmd->add_option("--model", o->model, "Preset id or path to a Hugging Face config.json")->capture_default_str();
  cmd->add_option("--layers", o->layers, "Keep only the first N layers (0: all)")->capture_default_str();
  cmd->add_option("--seqlens", o->seqlens, "Sequence lengths (k = 1024)")->capture_default_str();
  cmd->add_option("--batch", o->batch, "Sequences per step")->capture_default_str();
  cmd->add_option("--steps", o->steps, "Timed steps per length")->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Untimed steps before them")->capture_default_str();
  cmd->add_option("--precision", o->precision, "master or bf16 (see train)")->capture_default_str();
  cmd->add_flag("--checkpointing", o->checkpointing, "Activation checkpointing (see train)");
  cmd->add_flag("--selective-checkpointing", o->selective, "Checkpointing that keeps attention's output (see train)");
  cmd->add_option("--mlp-tile", o->mlp_tile, "MLP tile in tokens (see train)")->capture_default_str();
  cmd->add_option("--zero", o->zero, "ZeRO stage across the ranks (see train)")->capture_default_str();
  cmd->add_flag("--offload-optimizer", o->offload_optimizer, "AdamW on host threads (see train)");
  cmd->add_option("--bucket", o->bucket, "Elements per communication bucket (see train)")->capture_default_str();
  cmd->add_option("--gpus", o->gpus, "Each length on N ranks of this host (see train)");
  cmd->add_option("--loss-chunk", o->loss_chunk, "lm_head + cross-entropy chunk in tokens (see train)")->capture_default_str();
  cmd->add_flag("--no-autotune", o->no_autotune, "cuBLASLt's first heuristic choice per GEMM shape");
  cmd->add_flag("--breakdown", o->breakdown, "A profiled step per length (see train)");
  cmd->add_flag("--resume", o->resume, "Skip the lengths --out already holds (measured or out of memory)");
  cmd->add_flag("--find-max", o->find_max, "Then bisect for the longest length that fits");
  cmd->add_option("--find-max-granularity", o->granularity, "Stop when the boundary is known to this many tokens")
      ->capture_default_str();
  cmd->add_option("--find-max-ceiling", o->ceiling, "Do not try lengths beyond this")->capture_default_str();
  cmd->add_option("--device", o->device, "GPU index")->capture_default_str();
  cmd->add_option("--out", o->out, "Records file (appended; default upgradebench-sweep-<date>.jsonl)");
  o->output.add_to(*cmd);
  add_record_db_flag(*cmd, ctx);
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
