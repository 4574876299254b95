// `upgradebench decompose`: where a training step's time goes, split into buckets that add up to
// the step (analysis/decompose/), the median step printed and recorded.
//   decompose TRACE...   torch.profiler traces people already have (one file, or a folder with
//                        one per rank), every step of every GPU;
//   decompose [train options]   our engine's step: timed with profiling off, then more steps
//                        profiled under CUPTI (measure/engine_decomposition.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>

#include "analysis/decompose/decomposition_summary.hpp"
#include "analysis/decompose/job_ranks.hpp"
#include "analysis/run_limits.hpp"
#include "base/error.hpp"
#include "base/text.hpp"
#include "base/json_stream.hpp"
#include "base/progress.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/gpu_binary.hpp"
#include "cli/measuring_shell.hpp"
#include "cli/output.hpp"
#include "cli/train_options.hpp"
#include "records/context_record.hpp"
#include "records/decomposition_records.hpp"
#include "records/readers/decomposition_log.hpp"
#include "records/readers/log_kind.hpp"
#include "records/record_file.hpp"
#include "report/measurement_views.hpp"

#ifdef UB_HAVE_CUDA
#include "cli/gpu_workers.hpp"
#include "measure/train.hpp"
#endif

namespace ub::cli {

namespace {

using nlohmann::json;

struct DecomposeOptions {
  std::vector<std::string> inputs;
  std::string classes, step_name = "^ProfilerStep#";
  int steps = 0;  // traces: equal parts of the timeline; the engine: timed steps
  std::string trace_out;
  TrainOptions train;
  std::vector<CLI::Option*> engine_only;  // options that run the engine, refused with traces
  ShellOptions shell;
};

// A trace starts with `{` or `[` (after gzip, which zlib undoes); a printout does not.
bool looks_like_json_file(const std::string& path) {
  trace::ByteSource src(path);
  char c = 0;
  while (src.read(&c, 1) == 1) {
    if (!std::isspace(static_cast<unsigned char>(c))) return c == '{' || c == '[';
  }
  return false;
}

// The FLOPs of --model, --layers and --seqlen over a trace's kernel times: a rate past the GPU's
// dense peak says the options describe another step than the trace's (a wrong depth or length),
// never a measurement to print and record.
void refuse_work_past_peak(const DecompositionRecord& r, const Accelerator& gpu, const std::string& whose,
                           const DecomposeOptions& o) {
  const std::optional<double> most = gpu.most_measurable_tflops(Dtype::bf16);
  if (!most) return;
  for (const DecompositionBucketRecord& b : r.buckets) {
    if (!b.tflops || *b.tflops <= *most) continue;
    throw UsageError(fmt::format(
        "--model {} --layers {} --seqlen {} --batch {}: {}: its bucket \"{}\" would run {:.1f} TFLOPS, past the {}'s "
        "dense bf16 peak ({:.0f} TFLOPS): the trace is no step of that model, depth and length; give the ones it ran",
        o.train.model, o.train.layers > 0 ? std::to_string(o.train.layers) : "(all)", o.train.seqlen, o.train.batch,
        whose, printable(b.name), *b.tflops, gpu.id, gpu.peak(Dtype::bf16).get().value_or(*most)));
  }
}

trace::KernelClasses kernel_classes(Context& ctx, const DecomposeOptions& o) {
  trace::KernelClasses classes;
  classes.add_file(ctx.data_dir() / "kernel_classes.json", false);
  if (!o.classes.empty()) classes.add_file(o.classes, true);
  return classes;
}

// Our engine's step: the timed steps, then the profiled ones.
void run_engine(Context& ctx, DecomposeOptions& o) {
  if (o.steps > 0) o.train.steps = o.steps;
  TrainConfig cfg = train_config(ctx, o.train);
  cfg.decompose = true;
  cfg.trace_out = o.trace_out;
  trace::KernelClasses classes = kernel_classes(ctx, o);
#ifdef UB_HAVE_CUDA
  auto run = start_gpu_run(ctx, "decompose", std::to_string(o.train.device), o.shell.out, cfg);
  report::View view;
  std::string error;
  bool oom = false;
  for_each_device(*run, [&](measure::DeviceRun& d) {
    const Accelerator* gpu = catalog_entry(ctx, d.device_name);
    if (gpu) cfg.peak_tflops = gpu->peak(Dtype::bf16).get();
    measure::TrainBenchmark b(cfg, d, &classes, gpu);
    measure::run_benchmark(b, d);
    if (b.decomposition()) {
      report::add_decomposition_block(view.doc, *b.decomposition());
      view.json.push_back(*b.decomposition());
    }
    error = b.summary().error, oom = b.summary().oom;
  });
  if (oom) {
    run->progress.line(fmt::format("decompose: did not fit: {}", error));
    ctx.exit_code = kExitOutOfMemory;
    return;
  }
  if (view.doc.blocks.empty() && !run->interrupted->load()) throw WorkError(fmt::format("decompose: {}", error));
  finish_gpu_run(ctx, *run, std::move(view), o.shell.output);
#else
  run_in_gpu_binary(ctx, "decompose");
#endif
}

void run(Context& ctx, DecomposeOptions& o, const CLI::App& cmd) {
  if (cmd.count("--steps") && o.steps <= 0) throw UsageError(fmt::format("--steps: must be positive, got {}", o.steps));
  if (o.inputs.empty()) return run_engine(ctx, o);
  for (const CLI::Option* x : o.engine_only) {
    if (x->count()) {
      throw UsageError(fmt::format("decompose: {} runs our engine; it does not apply to traces", x->get_name()));
    }
  }
  trace::KernelClasses classes = kernel_classes(ctx, o);
  trace::DecomposeOptions opts;
  opts.step_pattern = o.step_name;
  if (o.steps > 0) opts.steps = o.steps;
  std::optional<trace::BucketWork> work;
  if (cmd.count("--model")) {
    if (!cmd.count("--seqlen")) throw UsageError("--model needs --seqlen (and --batch) to count the step's FLOPs");
    const ModelShape m = ctx.model(o.train.model, o.train.layers);
    FlopOptions fo;
    fo.batch = o.train.batch;
    work = trace::model_work(step_flops(m, parse_size(o.train.seqlen, "--seqlen"), fo));
  } else if (cmd.count("--seqlen") || cmd.count("--layers") || cmd.count("--batch")) {
    throw UsageError("--seqlen, --layers and --batch describe the traced model: give --model too");
  }
  const std::vector<std::string> files = trace::trace_files(o.inputs);
  std::vector<std::string> read = files;  // every file the command reads, and its folders: --out must be none of them
  read.insert(read.end(), o.inputs.begin(), o.inputs.end());
  if (!o.classes.empty()) read.push_back(o.classes);
  if (cmd.count("--model")) read.push_back(o.train.model);
  refuse_output_among_inputs(o.shell.out, read, "--out");
  // The records of a trace go to --out (and --db) only when asked: reading a trace measures nothing.
  const std::string& out = o.shell.out;
  // The file is checked now and written at the first decomposition: a run that reads nothing
  // leaves no records file (nor a context record with no result after it).
  std::unique_ptr<RecordWriter> writer;
  std::optional<std::pair<std::string, ContextRecord>> records;
  if (!out.empty() || !ctx.history_db.empty()) {
    const json config = {{"inputs", o.inputs}, {"classes", o.classes}, {"step_name", o.step_name},
                         {"steps", o.steps}, {"model", work ? json(o.train.model) : json()},
                         {"seqlen", work ? json(o.train.seqlen) : json()},
                         {"batch", cmd.count("--batch") ? json(o.train.batch) : json()},
                         {"layers", o.train.layers}};
    records.emplace(records_path("decompose", out), make_context("decompose", ctx.argv, Fingerprint{}, config));
  }
  std::vector<DecompositionRecord> kept;
  const auto keep = [&](const DecompositionRecord& r) {
    if (!records) return;
    if (!writer) writer = open_records(ctx, records->first, records->second);
    writer->write(r);
    writer->sync();
  };
  Progress progress;
  std::vector<std::string> unknown;  // GPUs the catalog does not know: said after the result
  std::map<std::string, trace::JobRanks> jobs;  // per folder given: its traces are one job's
  std::vector<std::pair<trace::TraceDecomposition::Activity, std::string>> seen;  // each GPU's activities, and whose
  report::View view;
  report::Document& doc = view.doc;
  json& j = view.json;
  for (const std::string& f : files) {
    // bench_decompose.py's printout (text, not a trace): the same record, from what it printed.
    if (!looks_like_json_file(f)) {
      const LineSource t = LineSource::file(f);
      if (const LogKind kind = detect_log_kind(t); kind != LogKind::decomposition) {
        throw UsageError(fmt::format("{}: neither a torch.profiler trace (a JSON object) nor bench_decompose.py's printout "
                                     "(it has no '# wall step=' line); it reads as {}", f, to_string(kind)));
      }
      const DecompositionLog printout = read_decomposition_log(t);
      refuse_impossible_decomposition(printout, ctx.catalog());
      refuse_printout_not_of_model(printout, cmd.count("--model") ? ctx.model(o.train.model, o.train.layers)
                                                                  : ctx.model(kPrintoutModel, 0),
                                   fmt::format(" (bench_decompose.py trains {}: for a printout of another model or "
                                               "depth give --model, --layers and --seqlen)", kPrintoutModel));
      const DecompositionRecord r = printout_record(printout);
      if (const auto w = unknown_gpu_warning(printout.gpu, ctx.catalog(), printable(f))) unknown.push_back(*w);
      report::add_decomposition_block(doc, r);
      j.push_back(r);
      kept.push_back(r);
      continue;
    }
    progress.update(fmt::format("decompose: reading {}", f));
    const auto start = std::chrono::steady_clock::now();
    std::vector<trace::TraceDecomposition> ds;
    try {
      ds = trace::decompose_trace(f, classes, opts);
    } catch (const WorkError&) {
      // Our records (a JSON object a line, the context first) read as a trace end after their
      // first line: they are a run's measurements, not a trace.
      if (const LineSource t = LineSource::file(f); looks_like_records(t)) {
        throw UsageError(fmt::format("{}: upgradebench's records ({}), not a torch.profiler trace: `compare`, `predict` "
                                     "and `decide` read them", printable(f), to_string(detect_log_kind(t))));
      }
      throw;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > 2) {  // a long read says what it read, and how fast
      progress.line(fmt::format("decompose: {}: {:.0f} MB, {} events in {:.1f} s ({:.0f} MB/s)", f,
                                static_cast<double>(ds.front().bytes) / 1e6, ds.front().events, seconds,
                                static_cast<double>(ds.front().bytes) / 1e6 / seconds));
    }
    for (const trace::TraceDecomposition& d : ds) {
      const std::string whose = fmt::format("{} (GPU {})", printable(f), d.device);
      for (const auto& [activity, other] : seen) {
        if (activity == d.activity) {
          throw UsageError(fmt::format("{}: the same {} GPU activities at the same instants as {}: one measurement, not "
                                       "two (a rank's trace compressed or written again is not another rank's); give "
                                       "each rank's trace once", whose, d.activity.count, other));
        }
      }
      seen.emplace_back(d.activity, whose);
      if (const auto w = unknown_gpu_warning(d.gpu, ctx.catalog(), printable(f))) unknown.push_back(*w);
      const Accelerator* gpu = d.gpu.empty() ? nullptr : ctx.catalog().try_find(d.gpu);
      DecompositionRecord r = trace::summarize(d, work, gpu);
      if (work) r.seqlen = parse_size(o.train.seqlen, "--seqlen"), r.batch = o.train.batch;
      if (work && gpu) refuse_work_past_peak(r, *gpu, whose, o);
      report::add_decomposition_block(doc, r);
      j.push_back(r);
      kept.push_back(r);
    }
    if (std::find(o.inputs.begin(), o.inputs.end(), f) == o.inputs.end()) {  // a trace of a folder given
      jobs[std::filesystem::path(f).parent_path().string()].add(ds.front(), f);
    }
  }
  // Written once every trace is read and checked: a trace refused last leaves no records of the
  // others behind (a command that failed wrote nothing).
  for (const DecompositionRecord& r : kept) keep(r);
  if (writer) doc.blocks.back().notes.push_back("records: " + writer->path().string());
  o.shell.output.emit(doc, j);
  for (const auto& [folder, job] : jobs) {
    if (const auto m = job.missing(folder)) warn(*m);
  }
  for (const std::string& w : unknown) warn(w);
}

}  // namespace

void register_decompose(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<DecomposeOptions>();
  auto* cmd = app.add_subcommand("decompose", "Where a training step's time goes, in buckets that add up to the step: "
                                              "from torch.profiler traces, or our engine's step under CUPTI");
  cmd->add_option("TRACES", o->inputs,
                  "torch.profiler traces (.json, .json.gz), or folders of them (one per rank); none: run our engine");
  cmd->add_option("--classes", o->classes, "More kernel-name rules, ahead of data/kernel_classes.json");
  cmd->add_option("--step-name", o->step_name, "Traces: annotations that mark a step (extended regular expression)")
      ->capture_default_str();
  cmd->add_option("--steps", o->steps,
                  "Traces without step annotations: cut the GPU timeline into N equal steps. Our engine: timed steps "
                  "with profiling off (default 10)");
  o->train.add_to(*cmd, {.steps = false, .parallel = false, .breakdown = false});
  o->engine_only = o->train.engine_options();
  o->engine_only.push_back(
      cmd->add_option("--trace-out", o->trace_out,
                      "Our engine: write the profiled steps as a Chrome trace (torch.profiler's format: Perfetto "
                      "shows it, decompose reads it)"));
  add_shell_options(*cmd, ctx, o->shell, "decompose", {});
  cmd->callback([&ctx, o, cmd] { run(ctx, *o, *cmd); });
}

}  // namespace ub::cli
