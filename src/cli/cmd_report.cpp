// `upgradebench report OLD [NEW] -o DIR`: the HTML (self-contained, offline) and markdown report
// with its four charts as PNG and SVG, from the logs themselves (never from numbers typed into
// code). One training log: the run by sequence length, its memory fit and the longest sequence
// each GPU holds; two: the comparison, both stacks and the decision. Collective benchmarks
// (`nccl` records): busbw and time per call by size for one run, the comparison for two.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>

#include "analysis/compare.hpp"
#include "analysis/decide.hpp"
#include "analysis/log_comparisons.hpp"
#include "analysis/nccl_comparison.hpp"
#include "analysis/predict/prediction_series.hpp"
#include "analysis/run_limits.hpp"
#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/compare_options.hpp"
#include "cli/one_card.hpp"
#include "cli/output.hpp"
#include "cli/run_inputs.hpp"
#include "cli/same_measurement.hpp"
#include "facts/catalog.hpp"
#include "facts/model_shape.hpp"
#include "records/fields.hpp"
#include "records/readers/decomposition_log.hpp"
#include "records/readers/log_kind.hpp"
#include "records/readers/read_run.hpp"
#include "records/record_file.hpp"
#include "report/decomposition_report.hpp"
#include "report/nccl_views.hpp"
#include "report/prediction_report.hpp"
#include "report/run_reports.hpp"

namespace ub::cli {

namespace {

namespace fs = std::filesystem;

struct ReportOptions {
  std::vector<std::string> logs;
  std::string out_dir;
  std::string web_dir;
  CompareFlags flags;
  LogInputs inputs;
};

// A run drawn beside a prediction as "the new GPU measured" is a measurement of what was
// predicted: the GPU the prediction is for, and its workload (batch, model and depth, where both
// say them).
// Returns what differs without making it another workload: the attention backend, whose
// generation is each GPU's own (the guide's FA3 on Hopper, FA4 on Blackwell) but whose family (sdpa,
// FlashAttention) is a choice; empty if one family.
std::string refuse_other_measured(const LineSource& predictions, const RunLog& measured, const Catalog& catalog,
                                  const std::filesystem::path& models_dir) {
  std::optional<nlohmann::json> first;
  std::vector<std::string> warnings;
  for_each_record(predictions, [&](const RecordLine& r) {
    if (r.type == "prediction" && !first) first = r.json;
  }, warnings);
  if (!first) return "";
  const Fields f(*first, predictions.path);
  const std::string to = f.string_or("new_gpu", "");
  const Accelerator* gpu = catalog.try_find(measured.gpu);
  std::vector<std::string> differs;
  if (!gpu || gpu->id != to) differs.push_back(fmt::format("GPU {} vs {}", printable(measured.gpu), printable(to)));
  if (const auto batch = f.optional_count("batch"); batch && *batch != measured.batch) {
    differs.push_back(fmt::format("batch {} vs {}", measured.batch, *batch));
  }
  const std::string model = f.has("model") ? f.string("model") : "";
  if (!model.empty() && measured.model && to_lower(*measured.model) != to_lower(model)) {
    differs.push_back(fmt::format("model {} vs {}", printable(*measured.model), printable(model)));
  }
  // A log that names no depth ran the whole model (benchmark.py's model_size).
  std::optional<int64_t> measured_layers = measured.layers;
  if (!measured_layers && measured.model) {
    try {
      measured_layers = load_model(*measured.model, models_dir).layers;
    } catch (const std::exception&) {
      // a model this build does not know: its depth is not checked
    }
  }
  if (const auto layers = f.optional_count("layers"); layers && measured_layers && *measured_layers != *layers) {
    differs.push_back(fmt::format("layers {} vs {}", *measured_layers, *layers));
  }
  // The levers the prediction's input ran with (world size, recompute, sharding, offloading), as
  // `compare` holds two runs to them.
  // Model, depth and batch were compared above, with the measured run's defaults.
  RunLog predicted = prediction_workload(f);
  predicted.model = measured.model, predicted.layers = measured.layers, predicted.batch = measured.batch;
  if (!predicted.config.count("dtype")) predicted.dtype = measured.dtype;
  for (const std::string& d : workload_differences(measured, predicted)) {
    differs.push_back(d.rfind("different ", 0) == 0 ? d.substr(10) : d);
  }
  // Beyond the workload and our step's arithmetic: Liger's kernels, off in a benchmark.py log that
  // does not say liger=. The attention backend's generation is the GPU's own (the guide's FA3 on
  // Hopper, FA4 on Blackwell): below.
  const auto liger_default = [](const std::string&) -> std::optional<std::string> { return "0"; };
  for (std::string& d : config_differences(measured, predicted, {"liger"}, liger_default)) differs.push_back(std::move(d));
  if (!differs.empty()) {
    throw UsageError(fmt::format("report PREDICTIONS MEASURED: {} is not a measurement of what {} predicts ({}; the "
                                 "run's, then the prediction's): give the predicted GPU's run of that workload",
                                 printable(measured.path), printable(predictions.path), fmt::join(differs, ", ")));
  }
  // benchmark.py's attn_backend, or the attention our records say their step ran.
  const auto backend = [](const std::map<std::string, std::string>& config) {
    for (const char* key : {"attn_backend", "attention"}) {
      if (const auto it = config.find(key); it != config.end()) return printable(it->second);
    }
    return std::string("not said");
  };
  const std::string ran = backend(measured.config), predicted_from = backend(predicted.config);
  // One family in its generation for each GPU (flash_attention_3 on Hopper, _4 on Blackwell).
  const auto family = [](std::string b) {
    while (!b.empty() && (std::isdigit(static_cast<unsigned char>(b.back())) || b.back() == '_')) b.pop_back();
    return b;
  };
  if (family(ran) == family(predicted_from)) return "";
  return fmt::format("ATTENTION BACKEND: the measured run's is {}, the prediction's input ran {}: part of predicted over "
                     "measured is the backend, not the prediction", ran, predicted_from);
}

void run(Context& ctx, const ReportOptions& o) {
  if (o.logs.empty() || o.logs.size() > 2) throw UsageError("report takes one log, or two (OLD NEW)");
  refuse_page_over_inputs(o.out_dir, o.logs);
  refuse_repeated_inputs(o.logs, "report");
  if (const std::vector<std::string> given = o.flags.given(); o.logs.size() == 1 && !given.empty()) {
    throw UsageError(fmt::format("report of one log: {} {} for comparing two runs (OLD NEW); give the second log or leave "
                                 "{} out", fmt::join(given, ", "), given.size() == 1 ? "is" : "are",
                                 given.size() == 1 ? "it" : "them"));
  }
  // The inputs are read and checked first: a bad input is named whatever is installed.
  const auto web = [&] { return report::find_web_modules(o.web_dir, ctx.web_module_candidates()); };
  report::ReportContent content;
  std::vector<LineSource> texts;
  for (const std::string& path : o.logs) texts.push_back(o.inputs.read(path));
  // Each kind is told once: telling it is a pass over the file.
  std::vector<LogKind> kinds;
  for (const LineSource& t : texts) kinds.push_back(detect_log_kind(t));
  const bool nccl = kinds[0] == LogKind::nccl;
  if (nccl != (kinds.back() == LogKind::nccl)) {
    throw UsageError(fmt::format("report needs two logs of one kind: {} is {}, {} is {}", o.logs[0],
                                 to_string(kinds[0]), o.logs.back(), to_string(kinds.back())));
  }
  if (kinds.size() == 2 && kinds[1] == LogKind::prediction && kinds[0] != LogKind::prediction) {
    throw UsageError(fmt::format("report: {} is predict's records and comes first: `upgradebench report {} {}` draws the "
                                 "prediction beside the run that measured it", o.logs[1], o.logs[1], o.logs[0]));
  }
  if (kinds[0] == LogKind::prediction) {
    o.flags.refuse_unused("a prediction's report", false);
    // A second file: the new GPU's measured run, drawn beside the prediction.
    std::optional<RunLog> measured;
    std::string alert;
    if (texts.size() == 2) {
      if (kinds[1] != LogKind::training) {
        throw UsageError(fmt::format("report PREDICTIONS MEASURED: {} is {}, not a training log of the new GPU",
                                     o.logs[1], to_string(kinds[1])));
      }
      measured = read_run_log(texts[1]);
      refuse_impossible_run(*measured, ctx.catalog(), ctx.data_dir() / "models");
      alert = refuse_other_measured(texts[0], *measured, ctx.catalog(), ctx.data_dir() / "models");
    }
    report::ReportContent page = report::prediction_report(texts[0], measured);
    if (!alert.empty()) page.alert = page.alert.empty() ? alert : alert + " " + page.alert;
    report::write_report(page, o.out_dir, web());
    const std::string dir = printable(o.out_dir);
    std::printf("report: %s/report.html, %s/report.md (PREDICTED, not measured)\n%s\n", dir.c_str(), dir.c_str(),
                printable(page.banner).c_str());
    if (!page.alert.empty()) std::printf("%s\n", printable(page.alert).c_str());
    return;
  }
  const bool decomposition = kinds[0] == LogKind::decomposition;
  if (decomposition != (kinds.back() == LogKind::decomposition)) {
    throw UsageError(fmt::format("report needs two logs of one kind: {} is {}, {} is {}", o.logs[0],
                                 to_string(kinds[0]), o.logs.back(), to_string(kinds.back())));
  }
  std::vector<std::pair<std::string, std::string>> gpus;  // (GPU name, input) of each log read
  std::vector<std::pair<std::vector<std::string>, std::string>> said;  // (warnings, input): the lines skipped, said on stderr too
  if (decomposition) {
    o.flags.refuse_unused("a decomposition report", true);
    std::vector<DecompositionLog> logs;
    for (const LineSource& t : texts) {
      logs.push_back(read_decomposition_log(t)), gpus.emplace_back(logs.back().gpu, t.path);
      refuse_impossible_decomposition(logs.back(), ctx.catalog());  // as compare, predict and history add do
      if (logs.back().records.empty()) refuse_printout_not_of_model(logs.back(), ctx.model(kPrintoutModel, 0), "");
      said.emplace_back(logs.back().warnings, t.path);
    }
    std::optional<DecompositionComparison> c;
    if (logs.size() == 2) c = compare_decomposition(logs[0], logs[1], ctx.catalog(), o.flags.parse().force);
    content = report::decomposition_report(logs, c);
  } else if (nccl) {
    std::vector<NcclLog> logs;
    for (const LineSource& t : texts) {
      logs.push_back(read_nccl_log(t)), gpus.emplace_back(logs.back().gpu, t.path);
      said.emplace_back(logs.back().warnings, t.path);
    }
    if (logs.size() == 1) {
      content = report::nccl_run_report(logs[0], ctx.catalog());
    } else {
      o.flags.refuse_unused("a collective report", false);
      content = report::nccl_comparison_report(compare_nccl(logs[0], logs[1], ctx.catalog()));
    }
  } else if (o.logs.size() == 1) {
    const RunLog run = read_run_log(texts[0]);
    gpus.emplace_back(run.gpu, texts[0].path);
    said.emplace_back(run.warnings, texts[0].path);
    std::vector<std::string> warnings;
    const std::optional<ModelShape> model = run_model(run, ctx.data_dir() / "models", warnings);
    refuse_impossible_run(run, ctx.catalog().try_find(run.gpu), model);
    content = report::single_run_report(run, ctx.catalog(), model);
  } else {
    const CompareOptions opts = o.flags.parse();
    const Comparison c = compare_runs(read_run_log(texts[0]), read_run_log(texts[1]), ctx.catalog(),
                                      ctx.data_dir() / "models", opts);
    refuse_no_common_length(c);
    gpus.emplace_back(c.old_run.gpu, texts[0].path), gpus.emplace_back(c.new_run.gpu, texts[1].path);
    said.emplace_back(c.old_run.warnings, texts[0].path), said.emplace_back(c.new_run.warnings, texts[1].path);
    std::vector<std::string> reasons;
    if (c.old_gpu && c.new_gpu) {
      DecideInput in;
      in.from = c.old_gpu;
      in.to = c.new_gpu;
      in.model = c.model;
      in.price_from = opts.price_old;
      in.price_to = opts.price_new;
      reasons = decide(in).reasons;
    }
    content = report::comparison_report(c, reasons);
  }
  if (texts.size() == 2) refuse_one_card_two_names(gpu_side(texts[0]), gpu_side(texts[1]), "report");
  // After what tells two runs apart by workload, which says more.
  refuse_shared_figures(o.logs, "report", [&](const std::string& arg) { return o.inputs.read(arg); });
  report::write_report(content, o.out_dir, web());
  const std::string dir = printable(o.out_dir);  // names and text from the logs reach the terminal escaped
  std::printf("report: %s/report.html, %s/report.md, charts in %s/charts (PNG, SVG)\n", dir.c_str(), dir.c_str(),
              dir.c_str());
  if (!content.banner.empty()) std::printf("%s\n", printable(content.banner).c_str());
  if (!content.alert.empty()) std::printf("%s\n", printable(content.alert).c_str());
  if (content.lead_block && !content.body.blocks.empty()) {
    for (const std::string& line : content.body.blocks.front().notes) std::printf("- %s\n", printable(line).c_str());
  }
  for (const auto& [gpu, path] : gpus) {
    if (const auto w = unknown_gpu_warning(gpu, ctx.catalog(), printable(path))) warn(*w);
  }
  for (const auto& [warnings, path] : said) warn_about_lines(warnings, path);
}

}  // namespace

void register_report(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand("report", "HTML + markdown report with charts (PNG, SVG) from one "
                                           "training or collective log, or two compared");
  cmd->add_option("LOGS", o->logs, "One log, or OLD NEW (files, or run:ID selections of the history)")->required()->expected(-1);  // more than two: refused by name below
  cmd->add_option("-o,--page,--out", o->out_dir, "Folder the page is written into, created (--out: the older name; "
                                                  "--out is where records go in the measuring commands)")->required();
  cmd->add_option("--web-dir", o->web_dir, "node_modules holding vega, vega-lite, vega-embed");
  o->flags.add_to(*cmd);
  o->inputs.add_to(*cmd);
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
