// `upgradebench decide`: the ml-engineering guide's two-part verdict from the catalog (analysis/decide.hpp), with
// every conclusion's reason. Measurements of both GPUs (`compare`) decide part 2; this says what specs
// can, and with --old-run (a measurement of the old GPU only) what `predict` gives for part 2.
#include <fmt/format.h>

#include "analysis/decide.hpp"
#include "base/error.hpp"
#include "cli/arguments.hpp"
#include "cli/catalog_json.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/prediction_inputs.hpp"
#include "report/format.hpp"

namespace ub::cli {

namespace {

using nlohmann::json;
using report::Align;

struct DecideOptions {
  std::string from = "h200-sxm", to = "b200-sxm";
  std::string model = "llama-3.1-8b";
  std::string need;
  std::string price_from, price_to;
  std::vector<std::string> old_runs, measured;
  std::string seqlens;
  int64_t layers = 0;
  OutputOptions out;
};

void run(Context& ctx, const DecideOptions& o) {
  const Catalog& cat = ctx.catalog();
  DecideInput in;
  in.from = &cat.find(o.from);
  in.to = &cat.find(o.to);
  if (!o.model.empty() && o.model != "none") in.model = ctx.model(o.model);
  if (!o.need.empty()) in.need = parse_dtype_list(o.need, "--need-dtype");
  in.price_from = parse_optional_positive(o.price_from, "--price-from");
  in.price_to = parse_optional_positive(o.price_to, "--price-to");
  if (!o.old_runs.empty()) {
    PredictionRequest r;
    r.inputs = o.old_runs, r.measured = o.measured, r.seqlens = o.seqlens;
    r.from = in.from->id, r.to = in.to->id;
    r.model = o.model == "none" ? "" : o.model;
    r.layers = o.layers;
    r.price_from = in.price_from, r.price_to = in.price_to;
    in.predicted = run_predictions(ctx, r).predictions;
  } else if (!o.measured.empty() || !o.seqlens.empty()) {
    throw UsageError("--measured and --seqlen go with --old-run (the old GPU's decomposition or training log)");
  }
  const Decision d = decide(in);
  const SpecRatios& r = d.specs.ratios;

  report::Document doc;
  auto& t = doc.add(fmt::format("{} -> {}", in.from->name, in.to->name));
  t.table.columns = {{"figure", Align::left}, {in.from->id}, {in.to->id}, {"new/old"}};
  for (Dtype dt : {Dtype::bf16, Dtype::fp8, Dtype::fp6, Dtype::fp4, Dtype::nvfp4}) {
    t.table.add_row({fmt::format("peak {} TFLOPS", to_string(dt)), report::figure(in.from->peak(dt)),
                     report::figure(in.to->peak(dt)), report::ratio(r.peak.at(dt))});
  }
  auto mamf = [](const std::optional<PublishedMamf>& m) {
    return m ? report::figure(m->tflops) : std::string("unknown");
  };
  t.table.add_row({"published MAMF bf16", mamf(in.from->mamf_bf16), mamf(in.to->mamf_bf16),
                   report::ratio(r.mamf_bf16)});
  t.table.add_row({"published MAMF fp8", mamf(in.from->mamf_fp8), mamf(in.to->mamf_fp8),
                   report::ratio(r.mamf_fp8)});
  t.table.add_row({"memory GB (datasheet)", report::figure(in.from->memory_gb), report::figure(in.to->memory_gb),
                   report::ratio(r.memory)});
  // The capacity the memory verdict below uses: one ratio, named as such.
  const auto usable = [](const Accelerator& a) {
    return a.capacity_gib() ? fmt::format("{:.0f}", *a.capacity_gib()) : std::string("unknown");
  };
  const std::optional<double> usable_ratio = in.from->capacity_gib() && in.to->capacity_gib()
                                                 ? std::optional<double>(*in.to->capacity_gib() / *in.from->capacity_gib())
                                                 : std::nullopt;
  t.table.add_row({"usable memory GiB (the verdict's)", usable(*in.from), usable(*in.to), report::ratio(usable_ratio)});
  t.table.add_row({"bandwidth TB/s", report::figure(in.from->bandwidth_tbps),
                   report::figure(in.to->bandwidth_tbps), report::ratio(r.bandwidth)});
  t.table.add_row({"power W", report::figure(in.from->power_w), report::figure(in.to->power_w),
                   report::ratio(r.power)});
  if (in.price_from) {
    t.table.add_row({"price USD/GPU-hour", fmt::format("{:.2f}", *in.price_from),
                     fmt::format("{:.2f}", *in.price_to), report::ratio(d.break_even_speedup)});
  }
  auto& v = doc.add(fmt::format("Verdict: {}", d.verdict));
  v.notes = d.reasons;
  v.bulleted = true;

  std::vector<std::string> missing;
  for (Dtype dt : d.missing_dtypes) missing.emplace_back(to_string(dt));
  std::vector<std::string> added;
  for (Dtype dt : d.specs.new_dtypes) added.emplace_back(to_string(dt));
  json j = {{"from", in.from->id},
            {"to", in.to->id},
            {"model", in.model ? json(in.model->id) : json()},
            {"verdict", d.verdict},
            {"capability_gap", d.capability_gap},
            {"missing_dtypes", missing},
            {"new_dtypes", added},
            {"reasons", d.reasons},
            {"break_even_speedup", optional_json(d.break_even_speedup)},
            {"predicted", in.predicted},
            {"ratios",
             {{"bf16", optional_json(r.peak.at(Dtype::bf16))},
              {"fp8", optional_json(r.peak.at(Dtype::fp8))},
              {"memory", optional_json(r.memory)},
              {"bandwidth", optional_json(r.bandwidth)},
              {"power", optional_json(r.power)},
              {"mamf_bf16", optional_json(r.mamf_bf16)},
              {"mamf_fp8", optional_json(r.mamf_fp8)}}}};
  o.out.emit(doc, j);
}

}  // namespace

void register_decide(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<DecideOptions>();
  auto* cmd = app.add_subcommand("decide", "Is the new GPU worth it? Capability gate first, then "
                                           "what specs bound, break-even price ratio");
  cmd->add_option("--from", o->from, "The GPU you have (catalog id or name)")->capture_default_str();
  cmd->add_option("--to", o->to, "The GPU you consider")->capture_default_str();
  cmd->add_option("--model", o->model, "Preset id or config.json path ('none' to skip)")
      ->capture_default_str();
  cmd->add_option("--need-dtype", o->need, "Dtypes your recipe needs, e.g. fp8,nvfp4");
  cmd->add_option("--price-from", o->price_from, "USD per GPU-hour of the GPU you have");
  cmd->add_option("--price-to", o->price_to, "USD per GPU-hour of the GPU you consider");
  cmd->add_option("--old-run", o->old_runs,
                  "A measurement of the GPU you have (decomposition or training log): part 2 PREDICTED from it "
                  "(docs/predict.md)");
  cmd->add_option("--measured", o->measured, "With --old-run: micro-benchmarks of either GPU (as predict)");
  cmd->add_option("--seqlen", o->seqlens, "With --old-run: predict at these lengths (as predict)");
  cmd->add_option("--layers", o->layers, "With --old-run: the layers the run kept of --model");
  o->out.add_to(*cmd);
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
