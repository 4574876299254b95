// `upgradebench memfit LOG`: peak memory = a + b * tokens over the points that ran, and the
// longest sequence that fits a GPU (facts/memfit.hpp).
#include <fmt/format.h>

#include "records/provenance.hpp"
#include "analysis/memory_headroom.hpp"
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
  std::string path, capacity, for_gpu;
  OutputOptions out;
};

void run(Context& ctx, const MemfitOptions& o) {
  const RunLog log = read_run_log(o.path);
  const MemoryFit fit = fit_memory(memory_points(log));
  // Capacity: --capacity-gib, else the --for GPU's, else the log's GPU's (the catalog's rule).
  std::optional<double> capacity = parse_optional_positive(o.capacity, "--capacity-gib");
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
  // On the log's own GPU, a length measured out of memory caps what the fit says.
  const bool own_gpu = o.capacity.empty() && (o.for_gpu.empty() || ctx.catalog().try_find(log.gpu) == &ctx.catalog().find(o.for_gpu));
  const LongestSequence longest = longest_sequence(log, capacity, std::nullopt, own_gpu);
  const auto max_seqlen = longest.tokens;

  report::Document doc;
  auto& b = doc.add(fmt::format("{} ({}, batch {})", o.path, log.gpu, log.batch));
  if (!log.provenance.empty()) b.notes.push_back(not_measured_line(o.path, log.provenance));
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
  b.notes.push_back(fmt::format("capacity {:.1f} GiB ({}): longest sequence that fits: {}{}", *capacity, capacity_from,
                                max_seqlen ? fmt::format("{}", *max_seqlen) : "no limit in sight (memory does not grow)",
                                longest.capped ? fmt::format(" ({})", longest.how) : ""));
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
            {"warnings", log.warnings}};
  o.out.emit(doc, j);
  warn_about_lines(log.warnings, o.path);  // after the result: an error before it is the one line said
}

}  // namespace

void register_memfit(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<MemfitOptions>();
  auto* cmd = app.add_subcommand("memfit", "Peak memory vs tokens (least squares) and the longest "
                                           "sequence each GPU can hold");
  cmd->add_option("LOG", o->path, "A training log (benchmark.py's sweep log or upgradebench records)")->required();
  cmd->add_option("--capacity-gib", o->capacity, "Usable memory to fit into");
  cmd->add_option("--for", o->for_gpu, "Use this catalog GPU's usable capacity");
  o->out.add_to(*cmd);
  cmd->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace ub::cli
