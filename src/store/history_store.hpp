// What `history` does with its database: add runs (a file in one transaction: all its runs or
// none; a run already there is stored once, a run that has grown since gets its new lines), find
// runs by what they ran on, and hand trends, fleets, compare and report the rows they need.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analysis/history/fleet.hpp"
#include "analysis/history/stored_run.hpp"
#include "analysis/history/trend.hpp"
#include "base/line_source.hpp"
#include "store/database.hpp"

namespace ub::history {

// What to select runs by; empty fields select everything.
struct RunFilter {
  std::string gpu;      // part of the GPU's name, any case ("h200")
  std::string uuid;     // a GPU's UUID
  std::string host, command, model, kind;
  std::string since, until;  // dates, or their beginnings ("2026-11"), inclusive
  std::vector<std::pair<std::string, std::string>> stack;  // component = version, all of them
};

// same_measurement: the figures of a run already stored (run_id) under another context or header;
// not stored again.
enum class AddStatus { added, grown, unchanged, same_measurement };
std::string_view to_string(AddStatus s);

struct AddOutcome {
  AddStatus status = AddStatus::added;
  int64_t run_id = 0;
  std::string key, kind, command, date;
  size_t lines = 0, metrics = 0;
  std::vector<std::string> warnings;  // what the reader tolerated (damaged lines skipped, points read twice)
};

struct RunSummary {
  int64_t id = 0;
  std::string key, kind, command, format, date, host, model, gpu, source, added, workload;
  std::string provenance;  // what the numbers are when not measurements (provenance.hpp); "" measured
  int64_t gpus = 0, lines = 0, metrics = 0;
  int64_t world_size = 1;
};

struct RunDetail {
  RunSummary run;
  std::vector<StoredGpu> gpus;
  std::vector<std::pair<std::string, std::string>> stack;
  std::vector<MetricPoint> metrics;
};

struct MetricInfo {
  std::string metric;
  int64_t runs = 0;            // the runs that hold it, at any of its points
  std::vector<double> points;  // the x values seen
};

class HistoryStore {
 public:
  // Opens the database (open_database) and brings its schema up to date; read-only, only checks
  // that it is up to date (check_schema).
  explicit HistoryStore(const std::string& spec, Access access = Access::read_write);
  explicit HistoryStore(std::unique_ptr<Database> db);

  Database& database() { return *db_; }
  const std::string& name() const { return db_->name(); }  // the database, as messages name it

  // Every run of the file in one transaction; a file a reader refuses adds nothing (WorkError
  // naming it).
  // Each training run is held to `check` first (runs_of_file).
  std::vector<AddOutcome> add_file(const std::string& path, const RunCheck& check = {});
  std::vector<AddOutcome> add_runs(const std::vector<StoredRun>& runs, const std::string& source);

  // A reader's own check of a figure it shows (run, GPU name, metric, x, median): held before the
  // run's rows are held to their digest, so that what it names is said rather than that the
  // rows were edited (the digest check is the one left when the edit recomputed it).
  using FigureCheck = std::function<void(int64_t run, const std::string& gpu, const std::string& metric, double x,
                                         double median)>;

  // Each run read is held to its rows' digest (run_digest.hpp), after the checks naming what is wrong.
  std::vector<RunSummary> list(const RunFilter& f, size_t limit) const;
  std::optional<RunDetail> show(int64_t id, const FigureCheck& check = {}) const;
  std::vector<MetricInfo> metrics(const RunFilter& f) const;
  // The points (x values) at which `metric` is stored in runs matching `f`, ascending.
  std::vector<double> points(const std::string& metric, const RunFilter& f) const;
  // One row per run and GPU holding `metric` at `x`; `by`: the stack component whose version
  // labels each row.
  std::vector<TrendRun> trend_rows(const std::string& metric, double x, const std::string& by, const RunFilter& f,
                                   const FigureCheck& check = {}) const;
  std::vector<FleetSample> fleet_rows(const std::string& metric, double x, const RunFilter& f,
                                      const FigureCheck& check = {}) const;
  // The lines of the runs, in the order given, as one file named `name` (compare and report read
  // it as they read a file). Throws UsageError naming an id that is not there.
  LineSource run_text(const std::vector<int64_t>& ids, const std::string& name) const;

 private:
  AddOutcome add_run(const StoredRun& run, const std::string& source);
  // Adds to `checked` every run of `metric`'s kind that `f` selects (held to its digest after).
  void add_runs_of_its_kind(const std::string& metric, const RunFilter& f, std::set<int64_t>& checked) const;

  std::unique_ptr<Database> db_;
};

}  // namespace ub::history
