// `upgradebench memfit LOG...`: peak memory = a + b * tokens over the points that ran, and the
// longest sequence that fits a GPU (facts/memfit.hpp); given runs of one workload with different
// memory levers, or several GPUs, the longest sequence per lever and GPU
// (analysis/memory_levers.hpp).
#include <fmt/format.h>

#include <algorithm>

#include "records/provenance.hpp"
#include "analysis/compare.hpp"
#include "analysis/memory_headroom.hpp"
#include "analysis/memory_levers.hpp"
#include "base/text.hpp"
#include "base/error.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "facts/memfit.hpp"
#include "records/readers/read_run.hpp"
#include "report/format.hpp"

namespace ub::cli {

namespace {

using nlohmann::json;
using report::Align;

struct MemfitOptions {
  std::vector<std::string> paths;
  std::string capacity, for_gpu;
  OutputOptions out;
  std::string path;  // the one LOG
};

// A run read for its memory: no figure in it past what its GPU can show; a point whose steps'
// peaks differ widely is warned about.
RunLog checked_run(Context& ctx, const std::string& path) {
  RunLog log = read_run_log(path);
  refuse_impossible_run(log, ctx.catalog(), ctx.data_dir() / "models");
  for (std::string& w : varying_peaks(log)) log.warnings.push_back(std::move(w));
  return log;
}

void run_one(Context& ctx, const MemfitOptions& o) {
  if (!o.capacity.empty() && !o.for_gpu.empty()) {
    throw UsageError("--capacity-gib and --for both give the capacity: give one");
  }
  const RunLog log = checked_run(ctx, o.path);
  const MemoryFit fit = fit_memory(memory_points(log), o.path);
  // Capacity: --capacity-gib, else the --for GPU's, else the log's GPU's (the catalog's rule).
  std::optional<double> capacity = parse_optional_positive(o.capacity, "--capacity-gib", kCapacityGibRange);
  std::string capacity_from = "--capacity-gib";
  if (!capacity) {
    const Accelerator* a = o.for_gpu.empty() ? ctx.catalog().try_find(log.gpu) : &ctx.catalog().find(o.for_gpu);
    if (!a) {
      throw UsageError(fmt::format("{}: GPU '{}' is not in the catalog: give --capacity-gib or --for GPU", o.path, log.gpu));
    }
    capacity = a->capacity_gib();
    if (!capacity) throw UsageError(fmt::format("the catalog has no usable capacity for {}: give --capacity-gib", a->id));
    capacity_from = a->id;
  }
  // On the log's own GPU, a length measured out of memory caps what the fit says; so it does for a
  // --capacity-gib no larger than that GPU's (what ran out of memory there runs out here too).
  const Accelerator* own = ctx.catalog().try_find(log.gpu);
  const bool for_own = o.for_gpu.empty() || (own && own == &ctx.catalog().find(o.for_gpu));
  const bool own_gpu = for_own && (o.capacity.empty() || (own && own->capacity_gib() && *capacity <= *own->capacity_gib()));
  // A smaller capacity asked of the same GPU (what fits in less) is not held by what the run ran.
  const bool runs_hold = own_gpu && (o.capacity.empty() || *capacity >= *own->capacity_gib());
  const LongestSequence longest = longest_sequence(log, capacity, std::nullopt, own_gpu, runs_hold);
  const auto max_seqlen = longest.tokens;

  report::Document doc;
  const std::string job = sharded_job(log);
  auto& b = doc.add(fmt::format("{} ({}, batch {}{})", o.path, log.gpu, log.batch, job.empty() ? "" : ", " + job));
  if (!log.provenance.empty()) {
    b.notes.push_back(not_measured_line(o.path, log.provenance));
    doc.data_tag = example_if_noted(log.provenance).tag();
  }
  b.table.columns = {{"seqlen"}, {"tokens"}, {"measured GiB"}, {"fitted GiB"}, {"status", Align::left}};
  for (const RunPoint& p : log.points) {
    const double tokens = static_cast<double>(p.seqlen) * static_cast<double>(log.batch);
    const double fitted = fit.intercept_gib + fit.slope_gib_per_token * tokens;
    std::string measured = "-";
    if (p.status == PointStatus::ok) {
      if (auto g = point_stats(log, p).peak_mem_gib) measured = report::num(*g);
    }
    b.table.add_row({fmt::format("{}", p.seqlen), fmt::format("{:.0f}", tokens), measured,
                     report::num(fitted), p.status == PointStatus::ok ? "ok" : "oom"});
  }
  b.notes.push_back(fmt::format("peak GiB = {:.2f} + {:.6f} x tokens (R^2 {:.4f}, {} points)",
                                fit.intercept_gib, fit.slope_gib_per_token, fit.r2, fit.points));
  // Below the fit's intercept (the weights and state alone) no sequence fits at all: say that,
  // not "0 tokens".
  const std::string fits = max_seqlen && *max_seqlen <= 0
                               ? fmt::format("none: the memory before any token ({:.2f} GiB) is past it", fit.intercept_gib)
                           : max_seqlen ? fmt::format("{}", *max_seqlen)
                                        : std::string("no limit in sight (memory does not grow)");
  b.notes.push_back(fmt::format("capacity {:.1f} GiB ({}): longest sequence that fits: {}{}", *capacity, capacity_from, fits,
                                longest.capped || longest.ran_past_fit ? fmt::format(" ({})", longest.how) : ""));
  // A line carried far past its points is a guess: said, in every output.
  std::vector<std::string> warnings = log.warnings;
  if (const auto guess = longest.guess()) {
    warnings.push_back(*guess);
    b.notes.push_back(*guess);
  }
  json j = {{"intercept_gib", fit.intercept_gib},
            {"slope_gib_per_token", fit.slope_gib_per_token},
            {"r2", fit.r2},
            {"points", fit.points},
            {"capacity_gib", *capacity},
            {"capacity_from", capacity_from},
            {"max_seqlen", max_seqlen ? json(*max_seqlen) : json()},
            {"fitted_max_seqlen", longest.fitted ? json(*longest.fitted) : json()},
            {"capped_by_out_of_memory", longest.capped ? json(*longest.out_of_memory_at) : json()},
            {"provenance", log.provenance},
            {"warnings", warnings}};
  o.out.emit(doc, j);
  warn_about_lines(log.warnings, o.path);  // after the result: an error before it is the one line said
}

// The GPUs to read the ladder for: --for's list, else every catalog GPU the runs were measured on.
std::vector<LadderGpu> ladder_gpus(Context& ctx, const MemfitOptions& o, const std::vector<RunLog>& logs) {
  const Catalog& cat = ctx.catalog();
  std::vector<const Accelerator*> chosen;
  if (!o.for_gpu.empty()) {
    for (const std::string& name : split(o.for_gpu, ',')) {
      const Accelerator* a = &cat.find(name);
      if (std::find(chosen.begin(), chosen.end(), a) == chosen.end()) chosen.push_back(a);  // each GPU once
    }
    if (chosen.empty()) throw UsageError(fmt::format("--for '{}': no GPU named", o.for_gpu));
  } else {
    for (const RunLog& l : logs) {
      const Accelerator* a = cat.try_find(l.gpu);
      if (!a) throw UsageError(fmt::format("{}: GPU '{}' is not in the catalog: give --for GPU", l.path, l.gpu));
      if (std::find(chosen.begin(), chosen.end(), a) == chosen.end()) chosen.push_back(a);
    }
  }
  std::vector<LadderGpu> gpus;
  for (const Accelerator* a : chosen) {
    if (!a->capacity_gib()) throw UsageError(fmt::format("the catalog has no usable capacity for {}", a->id));
    gpus.push_back({a->id, a->capacity_gib(), [&cat, a](const RunLog& r) { return cat.try_find(r.gpu) == a; }});
  }
  return gpus;
}

void run_ladder(Context& ctx, const MemfitOptions& o) {
  if (!o.capacity.empty()) throw UsageError("--capacity-gib reads one run at one capacity: with several runs or GPUs give --for");
  std::vector<RunLog> logs;
  for (const std::string& p : o.paths) logs.push_back(checked_run(ctx, p));
  std::vector<const RunLog*> runs;
  for (const RunLog& l : logs) runs.push_back(&l);
  const LeverLadder ladder = lever_ladder(runs, ladder_gpus(ctx, o, logs));

  report::Document doc;
  const RunLog& first = *ladder.rungs.front().run;
  auto& b = doc.add(fmt::format("Longest sequence per memory lever ({}{}, batch {})", first.model.value_or("model unknown"),
                                first.layers ? fmt::format(", {} layers", *first.layers) : "", first.batch));
  b.table.columns = {{"levers", Align::left}, {"run", Align::left}, {"measured on", Align::left}, {"peak GiB = a + b x tokens", Align::left}};
  for (const LadderGpu& g : ladder.gpus) b.table.columns.push_back({fmt::format("longest on {}", g.name)});
  b.table.columns.push_back({"step time", Align::left});
  b.table.columns.push_back({"data", Align::left});  // each run's own: the ladder may mix measured runs and examples
  json rows = json::array();
  for (const LeverRung& r : ladder.rungs) {
    const auto points = memory_points(*r.run);
    std::string line = "-";
    json fit_json;
    if (points.size() >= 2) {
      const MemoryFit fit = fit_memory(points, r.run->path);
      line = fmt::format("{:.2f} + {:.6f} x tokens", fit.intercept_gib, fit.slope_gib_per_token);
      fit_json = {{"intercept_gib", fit.intercept_gib}, {"slope_gib_per_token", fit.slope_gib_per_token}, {"r2", fit.r2},
                  {"points", fit.points}};
    }
    std::vector<std::string> row = {r.levers.name(), r.run->path, r.run->gpu.empty() ? "unknown" : r.run->gpu, line};
    json longest = json::object();
    for (size_t g = 0; g < ladder.gpus.size(); ++g) {
      const LongestSequence& l = r.longest[g];
      row.push_back(l.cell());
      longest[ladder.gpus[g].name] = {{"tokens", l.tokens ? json(*l.tokens) : json()}, {"how", l.how},
                                      {"capped_by_out_of_memory", l.capped ? json(*l.out_of_memory_at) : json()}};
      if (l.capped) b.notes.push_back(fmt::format("{} on {}: {}", r.levers.name(), ladder.gpus[g].name, l.how));
    }
    row.push_back(ladder.cost_text(r));
    row.push_back(example_if_noted(r.run->provenance).tag());
    b.table.add_row(row);
    rows.push_back({{"levers", r.levers.name()}, {"run", r.run->path}, {"gpu", r.run->gpu}, {"fit", fit_json},
                    {"longest", longest}, {"step_time_ratio", r.step_time_ratio ? json(*r.step_time_ratio) : json()},
                    {"cost_at", r.cost_at ? json(*r.cost_at) : json()}, {"provenance", r.run->provenance}});
    if (!r.run->provenance.empty()) b.notes.push_back(not_measured_line(r.run->path, r.run->provenance));
  }
  // The lever that got each GPU furthest.
  for (size_t g = 0; g < ladder.gpus.size(); ++g) {
    if (const LeverRung* best = ladder.furthest(g)) {
      b.notes.push_back(fmt::format("{}: the longest, {} tokens, with {} ({})", ladder.gpus[g].name,
                                    *best->longest[g].tokens, best->levers.name(), best->longest[g].how));
    }
  }
  b.notes.push_back("step time: the median step against the run with the fewest levers, at the longest length both "
                    "measured on one GPU");
  json gpus = json::array();
  for (const LadderGpu& g : ladder.gpus) gpus.push_back({{"gpu", g.name}, {"capacity_gib", *g.capacity_gib}});
  o.out.emit(doc, json{{"gpus", gpus}, {"levers", rows}});
  for (const RunLog& l : logs) warn_about_lines(l.warnings, l.path);
}

void run(Context& ctx, MemfitOptions& o) {
  if (o.paths.size() == 1 && o.for_gpu.find(',') == std::string::npos) {
    o.path = o.paths.front();
    return run_one(ctx, o);
  }
  run_ladder(ctx, o);
}

}  // namespace

void register_memfit(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<MemfitOptions>();
  auto* cmd = app.add_subcommand("memfit", "Peak memory vs tokens (least squares) and the longest "
                                           "sequence each GPU can hold, per memory lever");
  cmd->add_option("LOG", o->paths,
                  "Training logs (benchmark.py's sweep log or upgradebench records); several: runs of one workload "
                  "with different memory levers, the longest sequence per lever")
      ->required();
  cmd->add_option("--capacity-gib", o->capacity, "Usable memory to fit into (one LOG)");
  cmd->add_option("--for", o->for_gpu, "Use these catalog GPUs' usable capacity (GPU[,GPU...])")
      ->check([](const std::string& v) { return trim(v).empty() ? std::string("names no GPU") : std::string(); }, "GPU");
  o->out.add_to(*cmd);
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
