// `upgradebench predict --to GPU INPUT...`: the new GPU's step, PREDICTED from what was measured on
// the old one (core/predict/): a decomposition or a training log of the old GPU, each bucket scaled
// by the new GPU's ratio for its kind of work (measured micro-benchmarks where given with
// --measured, else the catalog), with intervals, cost against the break-even and memory fit.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "core/error.hpp"
#include "core/flops.hpp"
#include "core/predict/projection.hpp"
#include "core/predict/step_inputs.hpp"
#include "core/readers/log_kind.hpp"
#include "core/records/context_record.hpp"
#include "core/records/fields.hpp"
#include "core/records/record_file.hpp"
#include "report/prediction_view.hpp"

namespace ub::cli {

namespace {

struct PredictCommand {
  std::vector<std::string> inputs, measured;
  std::string to, from, model, out, seqlens, carry_from;
  int64_t layers = 0;
  std::optional<double> price_from, price_to;
  OutputOptions output;
};

void run(Context& ctx, const PredictCommand& o) {
  const Catalog& cat = ctx.catalog();
  const Accelerator& to = cat.find(o.to);
  if ((o.price_from.has_value()) != (o.price_to.has_value())) {
    throw UsageError("--price-from and --price-to go together (USD per GPU-hour of each GPU)");
  }
  for (const auto& p : {o.price_from, o.price_to}) {
    if (p && !(*p > 0)) throw UsageError("prices must be positive (USD per GPU-hour)");
  }
  std::optional<ModelShape> model;
  if (!o.model.empty()) model = ctx.model(o.model, o.layers);
  std::vector<std::string> warnings;
  std::vector<StepInput> steps;
  for (const std::string& path : o.inputs) {
    const TextLines t = read_text_lines(path);
    const LogKind kind = detect_log_kind(t);
    if (kind == LogKind::decomposition) {
      for (StepInput& s : steps_from_decompositions(t)) steps.push_back(std::move(s));
    } else if (kind == LogKind::training) {
      const auto flops = [&](int64_t seqlen, int64_t batch) -> std::optional<StepFlops> {
        if (!model) return std::nullopt;
        FlopOptions fo;
        fo.batch = batch;
        return step_flops(*model, seqlen, fo);
      };
      auto share = [&](int64_t s) -> std::optional<double> {
        const auto f = flops(s, 1);
        return f ? std::optional<double>(f->attention_share()) : std::nullopt;
      };
      auto tflop = [&](int64_t s) -> std::optional<double> {
        const auto f = flops(s, 1);
        return f ? std::optional<double>(f->total() / 1e12) : std::nullopt;
      };
      for (StepInput& s : steps_from_training_log(t, share, tflop, warnings)) steps.push_back(std::move(s));
    } else {
      throw UsageError(fmt::format("predict: {} is {}; give a decomposition (decompose records, bench_decompose.py's "
                                   "printout) or a training log (train / sweep records, benchmark.py's sweep log)",
                                   path, to_string(kind)));
    }
  }
  // The old GPU: --from, else what the inputs name (one GPU for all of them).
  std::string old_name = o.from;
  for (const StepInput& s : steps) {
    if (!o.from.empty()) break;
    if (s.old_gpu.empty()) continue;
    if (!old_name.empty() && cat.find(old_name).id != cat.find(s.old_gpu).id) {
      throw UsageError(fmt::format("predict: the inputs measured different GPUs ({} and {}): one old GPU at a time",
                                   old_name, s.old_gpu));
    }
    old_name = s.old_gpu;
  }
  if (old_name.empty()) throw UsageError("predict: the inputs do not name their GPU: give --from GPU");
  const Accelerator& from = cat.find(old_name);
  MeasuredRates from_rates, to_rates;
  for (const std::string& path : o.measured) {
    const MeasuredFile m = read_measured(read_text_lines(path));
    const Accelerator* g = m.gpu.empty() ? nullptr : cat.try_find(m.gpu);
    if (!g || (g->id != from.id && g->id != to.id)) {
      throw UsageError(fmt::format("--measured {}: measured {}, neither {} nor {}", path,
                                   m.gpu.empty() ? "an unnamed GPU" : m.gpu, from.id, to.id));
    }
    merge(g->id == from.id ? from_rates : to_rates, m.rates);
  }
  PredictOptions po;
  po.price_from = o.price_from, po.price_to = o.price_to;
  std::vector<Prediction> ps;
  nlohmann::json j = nlohmann::json::array();
  std::unique_ptr<RecordWriter> writer;
  if (!o.out.empty()) {
    writer = std::make_unique<RecordWriter>(o.out);
    writer->write(make_context("predict", ctx.argv, Fingerprint{},
                               {{"inputs", o.inputs}, {"measured", o.measured}, {"from", from.id}, {"to", to.id},
                                {"model", o.model}, {"layers", o.layers}, {"price_from", or_null(o.price_from)},
                                {"price_to", or_null(o.price_to)}}));
  }
  if (!o.seqlens.empty()) {
    // Each length from the measured step nearest to it (by the ratio of lengths).
    if (!model) throw UsageError("--seqlen carries a measured step to other lengths by the model's FLOPs: give --model");
    std::vector<StepInput> measured;
    const std::optional<int64_t> only =
        o.carry_from.empty() ? std::nullopt : std::optional<int64_t>(parse_size(o.carry_from, "--carry-from"));
    for (StepInput& s : steps) {
      if (s.seqlen && (!only || *s.seqlen == *only)) measured.push_back(std::move(s));
    }
    if (measured.empty()) {
      throw UsageError(only ? fmt::format("--carry-from {}: no input measured that length", *only)
                            : std::string("--seqlen: no input says its sequence length"));
    }
    steps.clear();
    for (const int64_t target : parse_size_list(o.seqlens, "--seqlen")) {
      const auto distance = [&](const StepInput& s) {
        return std::abs(std::log(static_cast<double>(*s.seqlen) / static_cast<double>(target)));
      };
      const StepInput& nearest = *std::min_element(measured.begin(), measured.end(), [&](const auto& x, const auto& y) {
        return distance(x) < distance(y);
      });
      steps.push_back(*nearest.seqlen == target ? nearest : project_to_seqlen(nearest, target, *model, from_rates));
    }
  }
  for (StepInput& s : steps) {
    if (model && !s.step_tflop && s.seqlen) {
      FlopOptions fo;
      fo.batch = s.batch;
      s.step_tflop = step_flops(*model, *s.seqlen, fo).total() / 1e12;
    }
    Prediction p = predict_step(s, from, to, from_rates, to_rates, po);
    j.push_back(p);
    if (writer) writer->write(p);
    ps.push_back(std::move(p));
  }
  report::Document doc = report::prediction_document(ps);
  for (const std::string& w : warnings) doc.blocks.front().notes.push_back(w);
  if (writer) doc.blocks.back().notes.push_back("records: " + o.out);
  o.output.emit(doc, j);
}

}  // namespace

void register_predict(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<PredictCommand>();
  auto* cmd = app.add_subcommand("predict", "PREDICT a GPU you have not measured: its step from a decomposition or "
                                            "training log of the GPU you have, bucket by bucket");
  cmd->add_option("INPUTS", o->inputs, "Decompositions (decompose records, bench_decompose.py's printout) or training "
                                       "logs of the old GPU")
      ->required();
  cmd->add_option("--to", o->to, "The GPU to predict (catalog id or name)")->required();
  cmd->add_option("--from", o->from, "The old GPU, when the inputs do not name it");
  cmd->add_option("--measured", o->measured,
                  "Micro-benchmarks of either GPU (mamf, attention, bandwidth, nccl records; mamf-finder.py output; "
                  "bench_flash_attn.py lines): measured ratios instead of the catalog's");
  cmd->add_option("--model", o->model, "The model (preset or config.json): FLOPs for TFLOPS and MFU, and the "
                                       "attention share of a training log that does not record it");
  cmd->add_option("--layers", o->layers, "Keep only the first N layers of the model");
  cmd->add_option("--seqlen", o->seqlens,
                  "Predict at these lengths (k = 1024), each carried from the measured step nearest to it by the "
                  "model's FLOPs (needs --model); --to the same GPU checks the carrying against a measured curve");
  cmd->add_option("--carry-from", o->carry_from, "With --seqlen: carry from this measured length only");
  cmd->add_option("--price-from", o->price_from, "USD per GPU-hour of the old GPU");
  cmd->add_option("--price-to", o->price_to, "USD per GPU-hour of the new GPU");
  cmd->add_option("--out", o->out, "Append the prediction records to this file (JSON lines)");
  o->output.add_to(*cmd);
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
