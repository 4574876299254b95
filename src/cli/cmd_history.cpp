// `upgradebench history`: every run kept in one database (SQLite by default, PostgreSQL for a
// team), and what a history answers: which runs there are (list, show), which figures (metrics),
// how a figure moved over time and stack versions (trend), and which GPU of a fleet stands out
// (fleet). docs/history.md is the manual.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <utility>

#include "analysis/compare.hpp"
#include "analysis/history/stored_run.hpp"
#include "analysis/run_limits.hpp"
#include "base/dates.hpp"
#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/history_views.hpp"
#include "cli/interrupt.hpp"
#include "cli/output.hpp"
#include "cli/run_inputs.hpp"
#include "records/readers/decomposition_log.hpp"
#include "store/history_store.hpp"

namespace ub::cli {

namespace {

// A date or its beginning, as runs are dated (base/dates.hpp): a month past 12 or a day past 31 is
// a typing error, not a filter that matches nothing.
std::string date_prefix(const std::string& text, const char* what) {
  if (!text.empty() && !is_date_prefix(text)) {
    throw UsageError(fmt::format("{}: '{}' is not a date or its beginning (2026, 2026-11, 2026-11-30)", what, text));
  }
  return text;
}

struct FilterFlags {
  std::string gpu, uuid, host, command, model, kind, since, until;
  std::vector<std::string> stack;

  void add_to(CLI::App& cmd) {
    cmd.add_option("--gpu", gpu, "GPUs whose name contains this (any case: h200)");
    cmd.add_option("--uuid", uuid, "The GPU with this UUID");
    cmd.add_option("--host", host, "Runs on this host");
    cmd.add_option("--command", command, "Runs of this command (train, mamf, ...; benchmark.py, mamf-finder.py, ...)");
    cmd.add_option("--model", model, "Runs of this model");
    cmd.add_option("--kind", kind, "training, attention, decomposition, mamf, nccl, bandwidth, prediction");
    cmd.add_option("--since", since, "Runs dated on or after this (2026-11, 2026-11-30)");
    cmd.add_option("--until", until, "Runs dated on or before this");
    cmd.add_option("--stack", stack, "COMPONENT=VERSION the stack must have (torch=2.13.0); repeatable");
  }

  history::RunFilter parse() const {
    history::RunFilter f{gpu, uuid, host, command, model, kind, date_prefix(since, "--since"), date_prefix(until, "--until"), {}};
    for (const std::string& s : stack) {
      const size_t eq = s.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
        throw UsageError(fmt::format("--stack: '{}' is not COMPONENT=VERSION (torch=2.13.0)", s));
      }
      for (const auto& [component, version] : f.stack) {
        if (component == s.substr(0, eq) && version != s.substr(eq + 1)) {
          throw UsageError(fmt::format("--stack: {} must be {} and {} at once: no run can match", printable(component),
                                       printable(version), printable(s.substr(eq + 1))));
        }
      }
      f.stack.emplace_back(s.substr(0, eq), s.substr(eq + 1));
    }
    // Filters no run can pass are a mistake to name, not an empty answer.
    const size_t shared = std::min(f.since.size(), f.until.size());
    if (!f.since.empty() && !f.until.empty() && f.since.substr(0, shared) > f.until.substr(0, shared)) {
      throw UsageError(fmt::format("--since {} is after --until {}: no date is both", since, until));
    }
    const std::vector<std::string>& kinds = run_kinds();
    if (!kind.empty() && std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
      throw UsageError(fmt::format("--kind {}: not a kind of run ({})", printable(kind), fmt::join(kinds, ", ")));
    }
    return f;
  }
};

struct HistoryOptions {
  std::string db;
  std::vector<std::string> files;
  FilterFlags filter;
  std::string limit = "200", id, metric, at, by, tolerance = "3";
  OutputOptions out;

  std::string database() const { return db.empty() ? history::default_database() : db; }
  // A store for reading: the database must exist.
  history::HistoryStore reader() const {
    const std::string spec = database();
    history::require_existing(spec, !db.empty());
    return history::HistoryStore(spec, history::Access::read_only);
  }
};

// The point of `metric` asked for, or the only one stored; else a UsageError listing them.
double choose_point(const history::HistoryStore& store, const HistoryOptions& o, const history::RunFilter& f) {
  const std::vector<double> points = store.points(o.metric, f);
  if (points.empty()) {
    std::vector<std::string> names;
    for (const history::MetricInfo& m : store.metrics(f)) names.push_back(m.metric);
    throw UsageError(fmt::format("no run with the metric '{}' matches; stored: {} (see history metrics)", o.metric,
                                 names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
  }
  if (!o.at.empty()) {
    const double x = static_cast<double>(parse_size(o.at, "--at"));
    if (std::find(points.begin(), points.end(), x) != points.end()) return x;
    throw UsageError(fmt::format("--at {}: no figure of {} there; its points: {}", o.at, o.metric, fmt::join(points, " ")));
  }
  if (points.size() == 1) return points.front();
  throw UsageError(fmt::format("{} has figures at several points: choose one with --at ({})", o.metric,
                               fmt::join(points, " ")));
}

double parse_tolerance(const std::string& text) {
  std::string t = text;
  if (!t.empty() && t.back() == '%') t.pop_back();
  const double v = parse_positive(t, "--tolerance");
  if (v >= 100) throw UsageError(fmt::format("--tolerance: {} is not a percentage below 100", text));
  return v / 100;
}

// A stored run as messages name it: its database and its id.
std::string stored_run_name(const history::HistoryStore& store, int64_t run) {
  return fmt::format("history database {}: run {}", store.name(), run);
}

void add_database_flag(CLI::App& cmd, HistoryOptions& o) {
  cmd.add_option("--db", o.db,
                 "SQLite file or postgresql://user@host/dbname (default: $UPGRADEBENCH_DB, else "
                 "~/.local/share/upgradebench/history.sqlite)");
}

}  // namespace

// Figures of a GPU the catalog does not know are held to no peak, as they are added or shown:
// said after the result, once for each input (a file, a stored run) and GPU. Noted from the
// threads that read a file's runs.
class UnknownGpus {
 public:
  explicit UnknownGpus(const Catalog& catalog) : catalog_(catalog) {}
  void note(const std::string& gpu, const std::string& where) {
    if (const auto w = unknown_gpu_warning(gpu, catalog_, where)) {
      const std::lock_guard<std::mutex> lock(mutex_);
      said_.insert(*w);
    }
  }
  // Says what was noted, and forgets it.
  void say() {
    for (const std::string& w : std::exchange(said_, {})) warn(w);
  }

 private:
  const Catalog& catalog_;
  std::mutex mutex_;
  std::set<std::string> said_;
};

// Each stored figure a reading command shows, held to its GPU's peak (and its GPU noted where the
// catalog does not know it) as the store reads it.
history::HistoryStore::FigureCheck held_to_peaks(const history::HistoryStore& store, const Catalog& catalog,
                                                 UnknownGpus& unknown) {
  return [&store, &catalog, &unknown](int64_t run, const std::string& gpu, const std::string& metric, double x,
                                      double median) {
    refuse_impossible_stored_figure(stored_run_name(store, run), metric, x, median, gpu, catalog);
    unknown.note(gpu, stored_run_name(store, run));
  };
}

void register_history(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("history", "Every run in one database (SQLite or PostgreSQL): add, list, show, "
                                            "metrics, trend over time and stack versions, fleet outliers");
  cmd->require_subcommand(1);

  auto add_o = std::make_shared<HistoryOptions>();
  auto* add = cmd->add_subcommand("add", "Store record files and peers' logs (a file in one transaction; a run "
                                         "added twice is stored once)");
  add->add_option("FILES", add_o->files, "Our records, benchmark.py / mamf-finder.py / bench_flash_attn.py / "
                                         "bench_decompose.py output")->required();
  add_database_flag(*add, *add_o);
  add_o->out.add_to(*add);
  add->callback([add_o, &ctx] {
    if (const std::string db = add_o->database(); !history::is_postgres(db)) {
      refuse_output_among_inputs(db, add_o->files, "--db", "the history is written into it");
    }
    history::HistoryStore store(add_o->database());
    // What no GPU measures is stored no more than compare or report would read it.
    const Catalog& catalog = ctx.catalog();
    const std::filesystem::path models = ctx.data_dir() / "models";
    // A GPU the catalog does not know bounds none of these: said once a file.
    UnknownGpus unknown(catalog);
    std::string file_named;  // the file being added, as messages name it
    const ModelShape printout_model = ctx.model(kPrintoutModel, 0);
    const std::string printout_remedy = fmt::format(" (bench_decompose.py trains {})", kPrintoutModel);
    const RunCheck physical{[&](const RunLog& run) {
                              unknown.note(run.gpu, file_named);
                              refuse_impossible_run(run, catalog, models);
                            },
                            [&](const MamfLog& l) { unknown.note(l.gpu, file_named), refuse_impossible_ceiling(l, catalog); },
                            [&](const AttentionLog& l) {
                              unknown.note(l.gpu, file_named);
                              refuse_impossible_attention(l, catalog);
                            },
                            [&](DecompositionLog& l) {
                              unknown.note(l.gpu, file_named);
                              refuse_impossible_decomposition(l, catalog);
                              // A printout without seq= is stored at the length its work is, as compare reads it.
                              const std::optional<int64_t> len = refuse_printout_not_of_model(l, printout_model, printout_remedy);
                              if (!l.seqlen && len) l.seqlen = len;
                            }};
    FileOutcomes done;
    for (const std::string& file : add_o->files) {
      // Each file is one transaction: an interrupt rolls back the one being added, never those before it.
      end_on_interrupt_saying(fmt::format(
          "upgradebench: interrupted: {} not added (its transaction is rolled back); {} file(s) before it were; "
          "run the same command again to add the rest", printable(file), done.size()));
      try {
        file_named = printable(file);
        done.emplace_back(file, store.add_file(file, physical));
        end_on_interrupt_saying(fmt::format("upgradebench: interrupted: {} file(s) added, {} the last; the output was "
                                            "not finished", done.size(), printable(file)));
        for (const history::AddOutcome& run : done.back().second) warn_about_lines(run.warnings, file);
        unknown.say();
      } catch (const UsageError& e) {
        throw UsageError(fmt::format("{} (nothing of it added; {} files before it were)", e.what(), done.size()));
      } catch (const WorkError& e) {
        throw WorkError(fmt::format("{} (nothing of it added; {} files before it were)", e.what(), done.size()));
      }
    }
    add_o->out.emit(added_document(done, store.database().name()), added_json(done, store.database().name()));
  });

  auto list_o = std::make_shared<HistoryOptions>();
  auto* list = cmd->add_subcommand("list", "The stored runs matching the filters, oldest first");
  add_database_flag(*list, *list_o);
  list_o->filter.add_to(*list);
  list->add_option("--limit", list_o->limit, "At most this many runs")->capture_default_str();
  list_o->out.add_to(*list);
  list->callback([list_o] {
    const size_t limit = static_cast<size_t>(parse_size(list_o->limit, "--limit"));
    const auto runs = list_o->reader().list(list_o->filter.parse(), limit);
    list_o->out.emit(list_document(runs, limit), list_json(runs));
  });

  auto show_o = std::make_shared<HistoryOptions>();
  auto* show = cmd->add_subcommand("show", "One stored run: what ran, where, on which stack, and its figures");
  show->add_option("ID", show_o->id, "The run's id (history list)")->required();
  add_database_flag(*show, *show_o);
  show_o->out.add_to(*show);
  show->callback([show_o, &ctx] {
    const std::vector<int64_t> ids = parse_run_ids(show_o->id, "ID");
    if (ids.size() != 1) throw UsageError(fmt::format("ID: '{}' is more than one run; show takes one", show_o->id));
    const history::HistoryStore store = show_o->reader();
    UnknownGpus unknown(ctx.catalog());
    const auto detail = store.show(ids.front(), held_to_peaks(store, ctx.catalog(), unknown));
    if (!detail) throw UsageError(fmt::format("no run {} in the history database (see history list)", ids.front()));
    show_o->out.emit(show_document(*detail), show_json(*detail));
    unknown.say();
  });

  auto metrics_o = std::make_shared<HistoryOptions>();
  auto* metrics = cmd->add_subcommand("metrics", "The figures stored, with their points, for trend and fleet");
  add_database_flag(*metrics, *metrics_o);
  metrics_o->filter.add_to(*metrics);
  metrics_o->out.add_to(*metrics);
  metrics->callback([metrics_o] {
    const auto all = metrics_o->reader().metrics(metrics_o->filter.parse());
    metrics_o->out.emit(metrics_document(all), metrics_json(all));
  });

  auto trend_o = std::make_shared<HistoryOptions>();
  auto* trend = cmd->add_subcommand("trend", "One figure over time, or by a stack component's version, with the "
                                             "change between versions and its interval");
  trend->add_option("METRIC", trend_o->metric, "train.tflops, mamf.tflops.bf16, nccl.busbw.all_reduce.bf16, ... "
                                               "(history metrics)")->required();
  trend->add_option("--at", trend_o->at, "The point: sequence length, bytes (8k, 1G)");
  trend->add_option("--by", trend_o->by, "Group by this stack component's version (torch, cuda, cudnn, nccl, driver)");
  add_database_flag(*trend, *trend_o);
  trend_o->filter.add_to(*trend);
  trend_o->out.add_to(*trend);
  trend->callback([trend_o, &ctx] {
    const history::HistoryStore store = trend_o->reader();
    const history::RunFilter f = trend_o->filter.parse();
    const double x = choose_point(store, *trend_o, f);
    UnknownGpus unknown(ctx.catalog());
    const std::vector<TrendRun> rows =
        store.trend_rows(trend_o->metric, x, trend_o->by, f, held_to_peaks(store, ctx.catalog(), unknown));
    // A component no run stores (a typo: --by troch) would group every run under "unknown".
    if (!trend_o->by.empty() && !rows.empty() &&
        std::all_of(rows.begin(), rows.end(), [](const TrendRun& r) { return r.version.empty(); })) {
      throw UsageError(fmt::format("--by {}: none of the {} runs of {} stores a version of it (history show RUN lists "
                                   "a run's stack: torch, cuda, cudnn, nccl, driver, ...)", printable(trend_o->by),
                                   rows.size(), trend_o->metric));
    }
    const std::vector<Trend> t = trends_of(trend_o->metric, x, trend_o->by, rows);
    if (t.empty()) throw UsageError(fmt::format("no run of {} matches the filters", trend_o->metric));
    trend_o->out.emit(trend_document(t), trend_json(t));
    unknown.say();
  });

  auto fleet_o = std::make_shared<HistoryOptions>();
  auto* fleet = cmd->add_subcommand("fleet", "One figure across the GPUs of a model: each against the fleet's "
                                             "median, outliers flagged with their clocks, power and temperature");
  fleet->add_option("METRIC", fleet_o->metric, "mamf.tflops.bf16, train.tflops, ... (history metrics)")->required();
  fleet->add_option("--at", fleet_o->at, "The point: sequence length, bytes (8k, 1G)");
  fleet->add_option("--tolerance", fleet_o->tolerance, "Flag a GPU whose interval lies this many percent beyond the "
                                                       "fleet's median")->capture_default_str();
  add_database_flag(*fleet, *fleet_o);
  fleet_o->filter.add_to(*fleet);
  fleet_o->out.add_to(*fleet);
  fleet->callback([fleet_o, &ctx] {
    const double tolerance = parse_tolerance(fleet_o->tolerance);
    const history::HistoryStore store = fleet_o->reader();
    const history::RunFilter f = fleet_o->filter.parse();
    const double x = choose_point(store, *fleet_o, f);
    UnknownGpus unknown(ctx.catalog());
    const std::vector<FleetSample> samples = store.fleet_rows(fleet_o->metric, x, f, held_to_peaks(store, ctx.catalog(), unknown));
    const std::vector<Fleet> result = fleets_of(fleet_o->metric, x, tolerance, samples);
    if (result.empty()) throw UsageError(fmt::format("no GPU's run of {} matches the filters", fleet_o->metric));
    fleet_o->out.emit(fleet_document(result), fleet_json(result));
    unknown.say();
  });
}

}  // namespace ub::cli
