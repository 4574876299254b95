// `upgradebench decide`: the ml-engineering guide's two-part verdict.
//   decide OLD_DIR NEW_DIR   two suite folders (or any measurement files of the two GPUs, grouped
//                            by the GPU each names): one verdict from what both measured, its
//                            reasons, the guide's tables (analysis/upgrade_decision.hpp); with -o,
//                            the page as HTML and markdown (report/decision_page.hpp);
//   decide OLD_DIR --to GPU  one machine's folder: part 2 PREDICTED for the GPU not rented yet;
//   decide [--from --to]     the catalog alone (analysis/decide.hpp), with --old-run what
//                            `predict` gives for part 2.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "analysis/decide.hpp"
#include "analysis/upgrade_decision.hpp"
#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/arguments.hpp"
#include "cli/catalog_json.hpp"
#include "cli/commands.hpp"
#include "cli/one_card.hpp"
#include "cli/output.hpp"
#include "cli/prediction_inputs.hpp"
#include "cli/same_measurement.hpp"
#include "records/measurement_set.hpp"
#include "records/readers/read_run.hpp"
#include "report/decision_page.hpp"
#include "report/format.hpp"

namespace ub::cli {

namespace {

using nlohmann::json;
using report::Align;

struct DecideOptions {
  std::vector<std::string> inputs;  // suite folders or measurement files
  std::string from = "h200-sxm", to = "b200-sxm";
  bool to_given = false, model_given = false, from_given = false;
  std::string need_seqlen, out_dir, web_dir;
  bool force = false;
  std::string model = "llama-3.1-8b";
  std::string need;
  std::string price_from, price_to;
  std::string power_price, pue = "1.0";
  std::vector<std::string> old_runs, measured;
  std::vector<std::string> levers;  // the old GPU's runs with other memory levers
  std::string seqlens;
  int64_t layers = 0;
  OutputOptions out;
};

void run(Context& ctx, const DecideOptions& o);

// What the inputs measured, one set per GPU: a suite folder each, or files grouped by their GPU.
std::vector<MeasurementSet> measurement_sets(const std::vector<std::string>& inputs) {
  std::vector<MeasurementSet> sets;
  std::vector<LineSource> files;
  for (const std::string& in : inputs) {
    if (std::filesystem::is_directory(in)) {
      sets.push_back(read_suite_folder(in));
    } else {
      files.push_back(LineSource::file(in));
    }
  }
  for (MeasurementSet& s : read_measurement_files(files)) sets.push_back(std::move(s));
  return sets;
}

// The files of a suite folder that `predict` reads: the step's decompositions and the sweep as
// the steps, the micro-benchmarks as measured rates of the old GPU.
PredictionRequest prediction_of_folder(const MeasurementSet& s, const DecideOptions& o, const Accelerator& to) {
  PredictionRequest r;
  const std::filesystem::path dir = s.where;
  for (const ManifestPart& p : s.manifest->parts) {
    if (p.status != PartStatus::done) continue;
    const std::string path = (dir / p.records).string();
    if (p.name.rfind("decompose-", 0) == 0) r.inputs.push_back(path);
    if (p.name == "mamf" || p.name == "mamf-step" || p.name == "attention" || p.name == "bandwidth") {
      r.measured.push_back(path);
    }
  }
  if (r.inputs.empty() && s.manifest->part("sweep") && s.manifest->part("sweep")->status == PartStatus::done) {
    r.inputs.push_back((dir / "sweep.jsonl").string());
  }
  if (r.inputs.empty()) {
    throw UsageError(fmt::format("{}: no decomposition or sweep finished there: nothing to predict from", s.where));
  }
  r.to = to.id;
  r.model = s.manifest->workload.model;
  r.layers = s.manifest->workload.layers;
  const Prices prices = parse_prices(o.price_from, o.price_to);
  r.price_from = prices.old_gpu, r.price_to = prices.new_gpu;
  return r;
}

// The old GPU's runs with other memory levers (--levers), read once; they live as long as the decision.
std::vector<RunLog> lever_runs(const DecideOptions& o) {
  std::vector<RunLog> runs;
  for (const std::string& p : o.levers) runs.push_back(read_run_log(p));
  return runs;
}

UpgradeOptions upgrade_options(const DecideOptions& o, const std::vector<RunLog>& levers) {
  UpgradeOptions opt;
  for (const RunLog& r : levers) opt.old_levers.push_back(&r);
  const Prices prices = parse_prices(o.price_from, o.price_to);
  opt.price_old = prices.old_gpu, opt.price_new = prices.new_gpu;
  if (!o.need.empty()) opt.need = parse_dtype_list(o.need, "--need-dtype");
  if (!o.need_seqlen.empty()) opt.need_seqlen = parse_size(o.need_seqlen, "--need-seqlen");
  opt.force = o.force;
  opt.power_usd_per_kwh = parse_optional_positive(o.power_price, "--power-price", kPowerPriceRange);
  opt.pue = parse_positive(o.pue, "--pue", kPueRange);
  if (!opt.power_usd_per_kwh && opt.pue != 1) throw UsageError("--pue is for the cost of --power-price: give --power-price too");
  return opt;
}

// The page, on stdout and with -o in its folder.
void show_decision(Context& ctx, const DecideOptions& o, const UpgradeDecision& d) {
  const report::ReportContent page = report::decision_page(d);
  report::Document shown;
  if (!page.banner.empty()) shown.add().notes.push_back(page.banner);
  for (const report::Block& b : page.body.blocks) shown.blocks.push_back(b);
  if (!o.out_dir.empty()) {
    report::write_report(page, o.out_dir, report::find_web_modules(o.web_dir, ctx.web_module_candidates()));
    shown.blocks.back().notes.push_back(fmt::format("page: {0}/report.html, {0}/report.md", printable(o.out_dir)));
  }
  o.out.emit(shown, report::decision_json(d));
}

// One folder and --to: the same page, part 2 PREDICTED at every length the sweep ran.
void run_predicted(Context& ctx, const DecideOptions& o, const MeasurementSet& set) {
  const Accelerator& to = ctx.catalog().find(o.to);
  // The GPU the folder measured, predicted: nothing to decide, and its rows would call its own
  // measurements PREDICTED.
  if (const Accelerator* from = set.gpu.empty() ? nullptr : ctx.catalog().try_find(set.gpu); from && from->id == to.id) {
    throw UsageError(fmt::format("decide: --to {} is the GPU {} measured ({}): name the GPU you consider", to.id,
                                 printable(set.where), printable(set.gpu)));
  }
  PredictionRequest r = prediction_of_folder(set, o, to);
  if (set.sweep) {
    std::vector<std::string> lengths;
    for (const RunPoint& p : set.sweep->points) {
      if (p.status == PointStatus::ok) lengths.push_back(std::to_string(p.seqlen));
    }
    if (!lengths.empty() && !r.model.empty()) r.seqlens = fmt::format("{}", fmt::join(lengths, ","));
  }
  if (!o.power_price.empty()) {
    throw UsageError(fmt::format("--power-price prices the energy per token of both GPUs' measured runs; the {}'s power "
                                 "is not measured on a PREDICTED page: run the suite there and decide on both folders",
                                 to.id));
  }
  const PredictionRun run = run_predictions(ctx, r);
  const std::vector<RunLog> levers = lever_runs(o);
  UpgradeDecision d = decide_predicted_upgrade(set, run.predictions, to, ctx.catalog(), ctx.data_dir() / "models",
                                               upgrade_options(o, levers));
  d.warnings.insert(d.warnings.end(), run.warnings.begin(), run.warnings.end());
  show_decision(ctx, o, d);
}

void run_on_measurements(Context& ctx, const DecideOptions& o) {
  refuse_repeated_inputs(o.inputs, "decide");
  std::vector<std::string> read = o.inputs;
  read.insert(read.end(), o.levers.begin(), o.levers.end());
  refuse_page_over_inputs(o.out_dir, read);
  const std::vector<MeasurementSet> sets = measurement_sets(o.inputs);
  if (sets.size() > 2) {
    throw UsageError(fmt::format("decide: the inputs hold {} GPUs' measurements ({}, {}, ...): give two, the one you "
                                 "have first", sets.size(), sets[0].gpu, sets[1].gpu));
  }
  if (sets.size() == 1) {
    if (!o.to_given) {
      throw UsageError(fmt::format("decide: {} {} one GPU's measurements{}: give the other GPU's folder, or --to GPU "
                                   "for a PREDICTED part 2", fmt::join(o.inputs, " and "), o.inputs.size() == 1 ? "holds" : "are",
                                   sets[0].gpu.empty() ? "" : " (" + printable(sets[0].gpu) + ")"));
    }
    if (!sets[0].manifest) throw UsageError("decide --to GPU predicts from a suite folder: give the folder");
    if (o.from_given) {
      throw UsageError(fmt::format("decide: --from does not go with a suite folder: {} says its GPU ({})",
                                   sets[0].where, printable(sets[0].gpu)));
    }
    // The folder's manifest says its workload and its own measurements are what part 2 is predicted
    // from: options that would say otherwise would be ignored.
    for (const auto& [given, name] : std::vector<std::pair<bool, const char*>>{
             {o.model_given, "--model"}, {!o.seqlens.empty(), "--seqlens"}, {o.layers != 0, "--layers"},
             {!o.measured.empty(), "--measured"}, {!o.old_runs.empty(), "--old-run"}}) {
      if (given) {
        throw UsageError(fmt::format("decide: {} does not go with a suite folder and --to: {} says its workload in its "
                                     "manifest, and part 2 is predicted from its own measurements", name, sets[0].where));
      }
    }
    return run_predicted(ctx, o, sets[0]);
  }
  // Both GPUs measured: what predicts or names a GPU has nothing to do.
  const std::vector<std::pair<bool, const char*>> unused = {{o.to_given, "--to"}, {o.from_given, "--from"},
                                                            {o.model_given, "--model"},
                                                            {!o.seqlens.empty(), "--seqlens"}, {o.layers != 0, "--layers"},
                                                            {!o.measured.empty(), "--measured"}, {!o.old_runs.empty(), "--old-run"}};
  for (const auto& [given, name] : unused) {
    if (given) {
      throw UsageError(fmt::format("decide: {} goes with one GPU's folder or the catalog; {} and {} measure both GPUs",
                                   name, sets[0].where, sets[1].where));
    }
  }
  // Two names, one GPU (cli/one_card.hpp). Under one name it is one GPU measured twice: SAME GPU, or noise.
  refuse_one_card_two_names({sets[0].where, sets[0].gpu, sets[0].gpu_uuids}, {sets[1].where, sets[1].gpu, sets[1].gpu_uuids},
                            "decide");
  const std::vector<RunLog> levers = lever_runs(o);
  const UpgradeDecision d = decide_upgrade(sets[0], sets[1], ctx.catalog(), ctx.data_dir() / "models", upgrade_options(o, levers));
  refuse_shared_figures(o.inputs, "decide");  // after what tells the two apart by workload, which says more
  show_decision(ctx, o, d);
}

void run(Context& ctx, const DecideOptions& o) {
  if (!o.inputs.empty()) return run_on_measurements(ctx, o);
  if (!o.levers.empty()) throw UsageError("--levers goes with the old GPU's suite folder (the sweep they stand beside)");
  if (!o.need_seqlen.empty()) {
    throw UsageError("--need-seqlen goes with measurements (OLD_DIR NEW_DIR, or OLD_DIR --to GPU): the catalog alone "
                     "knows no sequence length a GPU holds");
  }
  if (o.layers != 0 && o.old_runs.empty()) throw UsageError("--layers goes with --old-run (the layers that run kept)");
  const Catalog& cat = ctx.catalog();
  DecideInput in;
  in.from = &cat.find(o.from);
  in.to = &cat.find(o.to);
  if (in.from == in.to) {
    throw UsageError(fmt::format("decide: --from and --to are both {}: an upgrade is to another GPU", in.from->id));
  }
  if (!o.power_price.empty()) {
    throw UsageError("--power-price prices the energy per token of measured runs, and the catalog alone measures none: "
                     "give both GPUs' suite folders");
  }
  if (parse_positive(o.pue, "--pue", kPueRange) != 1) {
    throw UsageError("--pue is for the cost of --power-price: give --power-price too");
  }
  // With --old-run the model is the run's own unless --model gives it (the page's memory reason
  // counts the model that ran, never the default).
  if (!o.model.empty() && o.model != "none" && (o.model_given || o.old_runs.empty())) in.model = ctx.model(o.model);
  if (!o.need.empty()) in.need = parse_dtype_list(o.need, "--need-dtype");
  const Prices prices = parse_prices(o.price_from, o.price_to);
  in.price_from = prices.old_gpu, in.price_to = prices.new_gpu;
  if (!o.old_runs.empty()) {
    PredictionRequest r;
    r.inputs = o.old_runs, r.measured = o.measured, r.seqlens = o.seqlens;
    r.from = in.from->id, r.to = in.to->id;
    // The model the logs name unless --model was given (then a log of another is refused).
    r.model = o.model == "none" || !o.model_given ? "" : o.model;
    r.layers = o.layers;
    r.price_from = in.price_from, r.price_to = in.price_to;
    PredictionRun run = run_predictions(ctx, r);
    in.predicted = std::move(run.predictions);
    if (!o.model_given) in.model = std::move(run.model);
    if (!o.model_given && !in.model) {
      warn(fmt::format("{}: the run names no model, so the memory of training it is left out: give --model",
                       printable(fmt::format("{}", fmt::join(o.old_runs, ", ")))));
    }
  } else if (!o.measured.empty() || !o.seqlens.empty()) {
    throw UsageError("--measured and --seqlen go with --old-run (the old GPU's decomposition or training log)");
  }
  const Decision d = decide(in);
  const SpecRatios& r = d.specs.ratios;

  report::Document doc;
  auto& t = doc.add(fmt::format("{} -> {}", in.from->name, in.to->name));
  t.table.columns = {{"figure", Align::left}, {in.from->id}, {in.to->id}, {"new/old"}};
  for (Dtype dt : {Dtype::bf16, Dtype::fp8, Dtype::int8, Dtype::mxfp8, Dtype::fp6, Dtype::fp4, Dtype::nvfp4, Dtype::mxfp4}) {
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
  std::rotate(doc.blocks.begin(), doc.blocks.end() - 1, doc.blocks.end());  // the verdict first, then its figures
  if (!o.out_dir.empty()) {
    report::ReportContent page;
    page.title = fmt::format("{} -> {}: {}", in.from->name, in.to->name, d.verdict);
    page.lead_block = true;
    if (in.predicted.empty()) {
      page.banner = "FROM THE CATALOG: the datasheets' figures, no measurement of either GPU";
    } else {
      page.banner = fmt::format("PREDICTED: part 2 for the {} from measurements of the {} (docs/predict.md), not measured",
                                in.to->name, in.from->name);
      page.chart_tag = "PREDICTED";
    }
    page.body = doc;
    report::write_report(page, o.out_dir, report::find_web_modules(o.web_dir, ctx.web_module_candidates()));
    doc.blocks.back().notes.push_back(fmt::format("page: {0}/report.html, {0}/report.md", printable(o.out_dir)));
  }

  json j = {{"mode", "catalog"},
            {"from", in.from->id},
            {"to", in.to->id},
            {"model", in.model ? json(in.model->id) : json()},
            {"verdict", d.verdict},
            {"capability_gap", d.capability_gap},
            {"missing_dtypes", dtype_names(d.missing_dtypes)},
            {"lost_dtypes", dtype_names(d.lost_dtypes)},
            {"new_dtypes", dtype_names(d.specs.new_dtypes)},
            {"unknown_dtypes", dtype_names(d.specs.unknown_dtypes)},
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
  auto* cmd = app.add_subcommand("decide", "Is the new GPU worth it? From two suite folders (OLD_DIR NEW_DIR), one "
                                           "folder and --to (predicted), or the catalog alone");
  cmd->add_option("INPUTS", o->inputs,
                  "Suite folders (OLD_DIR NEW_DIR), or measurement files of the two GPUs, grouped by the GPU each names");
  auto* from = cmd->add_option("--from", o->from, "The GPU you have (catalog id or name), without measurements")->capture_default_str();
  auto* to = cmd->add_option("--to", o->to, "The GPU you consider")->capture_default_str();
  auto* model = cmd->add_option("--model", o->model, "Preset id or config.json path ('none' to skip); with --old-run, "
                                                     "the model the logs name unless given")
                    ->capture_default_str();
  cmd->add_option("--need-dtype", o->need, "Dtypes your recipe needs, e.g. fp8,nvfp4");
  cmd->add_option("--price-old,--price-from", o->price_from,
                  "USD per GPU-hour of the GPU you have (--price-from: the older name)");
  cmd->add_option("--price-new,--price-to", o->price_to,
                  "USD per GPU-hour of the GPU you consider (--price-to: the older name)");
  cmd->add_option("--power-price", o->power_price, "USD per kWh of electricity: its cost per token, for GPUs you own");
  cmd->add_option("--pue", o->pue, "With --power-price: the facility's power over the GPUs' (1.0: the GPU alone)")
      ->capture_default_str();
  cmd->add_option("--need-seqlen", o->need_seqlen,
                  "A sequence length the team must train: a GPU that cannot hold it on its own is a capability gap");
  cmd->add_option("--levers", o->levers,
                  "Runs of the old GPU's workload with other memory levers (sweep records): the longest sequence "
                  "per lever on both GPUs, and which lever reaches --need-seqlen on the old GPU at what step time");
  cmd->add_flag("--force", o->force, "Compare measurements taken on different software stacks (said first on the page)");
  cmd->add_option("-o,--page,--out", o->out_dir,
                  "Also write the page (report.html, report.md, charts) into this folder (--out: the older name; --out "
                  "is where records go in the measuring commands)");
  cmd->add_option("--web-dir", o->web_dir, "node_modules holding vega, vega-lite, vega-embed");
  cmd->add_option("--old-run", o->old_runs,
                  "A measurement of the GPU you have (decomposition or training log): part 2 PREDICTED from it "
                  "(docs/predict.md)");
  cmd->add_option("--measured", o->measured, "With --old-run: micro-benchmarks of either GPU (as predict)");
  cmd->add_option("--seqlens,--seqlen", o->seqlens, "With --old-run: predict at these lengths (as predict)");
  cmd->add_option("--layers", o->layers, "With --old-run: the layers the run kept of --model");
  o->out.add_to(*cmd);
  cmd->callback([&ctx, o, to, from, model] {
    o->to_given = to->count() > 0;
    o->from_given = from->count() > 0;
    o->model_given = model->count() > 0;
    run(ctx, *o);
  });
}

}  // namespace ub::cli
