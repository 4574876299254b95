// `upgradebench predict --to GPU INPUT...`: the new GPU's step, PREDICTED from what was measured on
// the old one (analysis/predict/): a decomposition or a training log of the old GPU, each bucket scaled
// by the new GPU's ratio for its kind of work (measured micro-benchmarks where given with
// --measured, else the catalog), with intervals, cost against the break-even and memory fit.
#include <fmt/format.h>

#include <filesystem>

#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "cli/prediction_inputs.hpp"
#include "records/context_record.hpp"
#include "records/fields.hpp"
#include "analysis/predict/prediction_series.hpp"
#include "records/record_file.hpp"
#include "report/prediction_view.hpp"

namespace ub::cli {

namespace {

struct PredictCommand {
  PredictionRequest request;
  std::string price_old, price_new;  // text, parsed as every command parses a price
  std::string out;
  OutputOptions output;
};

// One call's predictions are one series, as a file of them is drawn (report): one workload, one
// prediction per length (a 2-layer and a 4-layer step, or a sweep and a decomposition of one
// length, are two questions). --out takes more predictions of the pair and workload it holds, at
// lengths it does not hold yet (records/prediction_series.hpp).
void refuse_other_series(const std::string& out, const std::vector<Prediction>& predictions) {
  PredictionSeries own;
  for (const Prediction& p : predictions) {
    const nlohmann::json j = p;
    if (const auto why = own.add(Fields(j, "prediction"))) {
      throw UsageError(fmt::format("predict: {}'s step is {}: one series per call; predict each workload on its own",
                                   printable(p.input.path), *why));
    }
  }
  std::error_code ec;
  if (out.empty() || !std::filesystem::is_regular_file(out, ec)) return;
  PredictionSeries series;
  std::vector<std::string> warnings;
  for_each_record(LineSource::file(out), [&](const RecordLine& line) {
    if (line.type == "prediction") (void)series.add(Fields(line.json, line.where));
  }, warnings);
  for (const Prediction& p : predictions) {
    const nlohmann::json j = p;
    if (const auto why = series.add(Fields(j, "prediction"))) {
      throw UsageError(fmt::format("--out {}: {}, as `report` draws a file; give another file", printable(out), *why));
    }
  }
}

void run(Context& ctx, PredictCommand o) {
  const Prices prices = parse_prices(o.price_old, o.price_new);
  o.request.price_from = prices.old_gpu, o.request.price_to = prices.new_gpu;
  std::vector<std::string> read = o.request.inputs;
  read.insert(read.end(), o.request.measured.begin(), o.request.measured.end());
  if (!o.request.model.empty()) read.push_back(o.request.model);  // a config.json path, or a preset id (no file)
  refuse_output_among_inputs(o.out, read, "--out");
  refuse_repeated_inputs(std::vector<std::string>(read.begin(), read.begin() + static_cast<std::ptrdiff_t>(
                                                                    o.request.inputs.size() + o.request.measured.size())),
                         "predict", "given twice it is predicted twice; give each measurement once");
  refuse_foreign_records(o.out, {"predict"});
  const PredictionRun run = run_predictions(ctx, o.request);
  refuse_other_series(o.out, run.predictions);
  const PredictionRequest& r = o.request;
  nlohmann::json j = nlohmann::json::array();
  std::unique_ptr<RecordWriter> writer;
  if (!o.out.empty()) {
    writer = std::make_unique<RecordWriter>(o.out);
    writer->write(make_context("predict", ctx.argv, Fingerprint{},
                               {{"inputs", r.inputs}, {"measured", r.measured}, {"from", run.from->id},
                                {"to", run.to->id}, {"model", r.model}, {"layers", r.layers}, {"to_layers", r.to_layers},
                                {"seqlen", r.seqlens}, {"carry_from", r.carry_from},
                                {"price_from", or_null(r.price_from)}, {"price_to", or_null(r.price_to)}}));
  }
  for (const Prediction& p : run.predictions) {
    j.push_back(p);
    if (writer) writer->write(p);
  }
  report::Document doc = report::prediction_document(run.predictions);
  for (const std::string& w : run.warnings) doc.blocks.front().notes.push_back(w);
  if (writer) doc.blocks.back().notes.push_back("records: " + o.out);
  o.output.emit(doc, j);
}

}  // namespace

void register_predict(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<PredictCommand>();
  auto* cmd = app.add_subcommand("predict", "PREDICT a GPU you have not measured: its step from a decomposition or "
                                            "training log of the GPU you have, bucket by bucket");
  cmd->add_option("INPUTS", o->request.inputs, "Decompositions (decompose records, bench_decompose.py's printout) or training "
                                       "logs of the old GPU")
      ->required();
  cmd->add_option("--to", o->request.to, "The GPU to predict (catalog id or name)")->required();
  cmd->add_option("--from", o->request.from, "The old GPU, when the inputs do not name it");
  cmd->add_option("--measured", o->request.measured,
                  "Micro-benchmarks of either GPU (mamf, attention, bandwidth, nccl records; mamf-finder.py output; "
                  "bench_flash_attn.py lines): measured ratios instead of the catalog's");
  cmd->add_option("--model", o->request.model, "The model (preset or config.json): FLOPs for TFLOPS and MFU, and the "
                                       "attention share of a training log that does not record it");
  cmd->add_option("--layers", o->request.layers, "The depth the inputs measured (the first N layers of the model), "
                                                 "where their records do not say it")
      ->check(CLI::Range(1, 100000));  // 0 would read as not given
  cmd->add_option("--to-layers", o->request.to_layers,
                  "Predict at this depth, carried from the measured one by the model's FLOPs and parameters (needs "
                  "--model); --to the same GPU checks the carrying against a measured run")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--seqlens,--seqlen", o->request.seqlens,
                  "Predict at these lengths (k = 1024), each carried from the measured step nearest to it by the "
                  "model's FLOPs (needs --model); --to the same GPU checks the carrying against a measured curve");
  cmd->add_option("--carry-from", o->request.carry_from, "With --seqlen: carry from this measured length only");
  cmd->add_option("--price-old,--price-from", o->price_old, "USD per GPU-hour of the old GPU (--price-from: the older name)");
  cmd->add_option("--price-new,--price-to", o->price_new, "USD per GPU-hour of the new GPU (--price-to: the older name)");
  cmd->add_option("--out", o->out, "Append the prediction records to this file (JSON lines)");
  o->output.add_to(*cmd);
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
