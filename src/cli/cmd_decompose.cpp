// `upgradebench decompose TRACE...`: where a training step's time goes, from torch.profiler traces
// people already have (one file, or a folder with one per rank): every step of every GPU split into
// buckets that add up to the step (core/trace/), the median step printed and recorded.
#include <fmt/format.h>

#include <chrono>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "core/records/context_record.hpp"
#include "core/records/record_file.hpp"
#include "core/trace/decomposition_summary.hpp"
#include "report/format.hpp"

namespace ub::cli {

namespace {

using nlohmann::json;
using report::Align;

struct DecomposeOptions {
  std::vector<std::string> inputs;
  std::string classes, step_name = "^ProfilerStep#", out;
  int steps = 0;
  std::string model, seqlen, batch = "1";
  int64_t layers = 0;
  OutputOptions output;
};

std::string ms(double v) { return report::num(v, 2); }

void add_block(report::Document& doc, const DecompositionRecord& r) {
  auto& b = doc.add(fmt::format("{} (GPU {}{}): step {} of {}, {:.2f} ms", r.file, r.device,
                                r.gpu.empty() ? "" : ", " + r.gpu, r.step, r.steps, r.step_ms));
  b.table.columns = {{"bucket", Align::left}, {"ms"}, {"share"}, {"over the steps", Align::left}, {"TFLOPS"},
                     {"of ceiling"}};
  for (const DecompositionBucketRecord& x : r.buckets) {
    b.table.add_row({x.name, ms(x.ms), report::percent(x.share), fmt::format("{}-{}", ms(x.min_ms), ms(x.max_ms)),
                     x.tflops ? report::num(x.tflops) : "-", x.of_ceiling ? report::percent(x.of_ceiling) + " " + x.ceiling : "-"});
  }
  b.table.add_row({"step", ms(r.step_ms), "100.0%", "", "", ""});
  b.notes.push_back(fmt::format("Steps: {}; the median step is shown, each bucket's range over the steps beside it.",
                                r.steps_from));
  b.notes.push_back(fmt::format("Collectives ran {} ms in that step, {} ms of it under compute kernels; the exposed "
                                "rest is the communication bucket.", ms(r.communication_ms),
                                ms(r.communication_overlapped_ms)));
  b.notes.push_back("Compute buckets share the time some compute kernel runs by their kernel time; copies and "
                    "collectives count where no compute kernel runs; idle is the rest (docs/decompose.md).");
  if (!r.unclassified.empty()) {
    std::string list;
    for (size_t i = 0; i < r.unclassified.size() && i < 5; ++i) {
      const auto& k = r.unclassified[i];
      list += fmt::format("{}{} ({} ms, {}x)", i ? "; " : "", k.name.substr(0, 90), ms(k.ms), k.count);
    }
    b.notes.push_back("Kernels no rule classified (in \"other compute\"; classify them with --classes FILE): " + list);
  }
}

void run(Context& ctx, const DecomposeOptions& o) {
  if (o.inputs.empty()) {
    throw UsageError("decompose: give torch.profiler traces (.json or .json.gz, or a folder with one per rank); "
                     "the decomposition of upgradebench's own step is `train --breakdown`");
  }
  trace::KernelClasses classes;
  classes.add_file(ctx.data_dir() / "kernel_classes.json", false);
  if (!o.classes.empty()) classes.add_file(o.classes, true);
  trace::DecomposeOptions opts;
  opts.step_pattern = o.step_name;
  if (o.steps < 0) throw UsageError("--steps: must be positive");
  if (o.steps > 0) opts.steps = o.steps;
  std::optional<StepFlops> flops;
  if (!o.model.empty()) {
    if (o.seqlen.empty()) throw UsageError("--model needs --seqlen (and --batch) to count the step's FLOPs");
    const ModelShape m = ctx.model(o.model, o.layers);
    FlopOptions fo;
    fo.batch = parse_size(o.batch, "--batch");
    flops = step_flops(m, parse_size(o.seqlen, "--seqlen"), fo);
  } else if (!o.seqlen.empty()) {
    throw UsageError("--seqlen needs --model");
  }
  const std::vector<std::string> files = trace::trace_files(o.inputs);
  std::unique_ptr<RecordWriter> writer;
  if (!o.out.empty()) {
    writer = std::make_unique<RecordWriter>(o.out);
    writer->write(make_context("decompose", ctx.argv, Fingerprint{},
                               {{"inputs", o.inputs}, {"classes", o.classes}, {"step_name", o.step_name},
                                {"steps", o.steps}, {"model", o.model}, {"seqlen", o.seqlen}, {"batch", o.batch},
                                {"layers", o.layers}}));
  }
  Progress progress;
  report::Document doc;
  json j = json::array();
  for (const std::string& f : files) {
    progress.update(fmt::format("decompose: reading {}", f));
    const auto start = std::chrono::steady_clock::now();
    const std::vector<trace::TraceDecomposition> ds = trace::decompose_trace(f, classes, opts);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > 2) {  // a long read says what it read, and how fast
      progress.line(fmt::format("decompose: {}: {:.0f} MB, {} events in {:.1f} s ({:.0f} MB/s)", f,
                                static_cast<double>(ds.front().bytes) / 1e6, ds.front().events, seconds,
                                static_cast<double>(ds.front().bytes) / 1e6 / seconds));
    }
    for (const trace::TraceDecomposition& d : ds) {
      const DecompositionRecord r = trace::summarize(d, flops, d.gpu.empty() ? nullptr : ctx.catalog().try_find(d.gpu));
      add_block(doc, r);
      j.push_back(r);
      if (writer) {
        writer->write(r);
        writer->sync();
      }
    }
  }
  if (writer) doc.blocks.back().notes.push_back("records: " + o.out);
  o.output.emit(doc, j);
}

}  // namespace

void register_decompose(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<DecomposeOptions>();
  auto* cmd = app.add_subcommand("decompose", "Where a training step's time goes, from torch.profiler traces: "
                                              "buckets that add up to the step");
  cmd->add_option("TRACES", o->inputs, "torch.profiler traces (.json, .json.gz), or folders of them (one per rank)");
  cmd->add_option("--classes", o->classes, "More kernel-name rules, ahead of data/kernel_classes.json");
  cmd->add_option("--step-name", o->step_name, "Annotations that mark a step (extended regular expression)")
      ->capture_default_str();
  cmd->add_option("--steps", o->steps, "Without step annotations: cut the GPU timeline into N equal steps");
  cmd->add_option("--model", o->model, "The model traced (preset or config.json): achieved TFLOPS per bucket");
  cmd->add_option("--seqlen", o->seqlen, "Its sequence length");
  cmd->add_option("--batch", o->batch, "Its micro-batch per GPU")->capture_default_str();
  cmd->add_option("--layers", o->layers, "Keep only the first N layers of the model");
  cmd->add_option("--out", o->out, "Append the decomposition records to this file (JSON lines)");
  o->output.add_to(*cmd);
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
