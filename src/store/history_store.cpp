// Adding runs to the history and reading them back; see history_store.hpp and docs/history.md.
#include "store/history_store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "base/dates.hpp"
#include "base/error.hpp"
#include "base/text.hpp"
#include "dist/fault.hpp"
#include "records/context_record.hpp"
#include "records/record_file.hpp"
#include "store/run_digest.hpp"
#include "store/schema.hpp"

namespace ub::history {

namespace {

Value text_or_null(const std::string& s) { return s.empty() ? Value{} : Value{s}; }
Value real_or_null(const std::optional<double>& v) { return v ? Value{*v} : Value{}; }

// A WHERE clause built from a RunFilter, its parameters numbered after those already bound.
class Where {
 public:
  Where(std::vector<Value>& params, const RunFilter& f, const char* gpu_alias) : params_(params) {
    // Per GPU where the query has one GPU per row; else any GPU of the run.
    if (!f.gpu.empty()) {
      gpu_clause("LOWER({}.name) LIKE {} ESCAPE '\\'", gpu_alias, "%" + like_literal(lower(f.gpu)) + "%");
    }
    if (!f.uuid.empty()) gpu_clause("{}.uuid = {}", gpu_alias, f.uuid);
    if (!f.host.empty()) add("r.host = {}", f.host);
    if (!f.command.empty()) add("r.command = {}", f.command);
    if (!f.model.empty()) add("r.model = {}", f.model);
    if (!f.kind.empty()) add("r.kind = {}", f.kind);
    if (!f.since.empty()) add("r.date >= {}", f.since);
    if (!f.until.empty()) add("r.date <= {}", f.until + "~");  // "~" sorts after any date's characters
    for (const auto& [component, version] : f.stack) {
      const std::string c = bind(component), v = bind(version);
      clauses_.push_back(fmt::format(
          "EXISTS (SELECT 1 FROM run_stack s WHERE s.run_id = r.id AND s.component = {} AND s.version = {})", c, v));
    }
  }
  std::string sql(const std::string& first = "") const {
    std::vector<std::string> all;
    if (!first.empty()) all.push_back(first);
    all.insert(all.end(), clauses_.begin(), clauses_.end());
    return all.empty() ? "" : fmt::format(" WHERE {}", fmt::join(all, " AND "));
  }
  std::string bind(Value v) {
    params_.push_back(std::move(v));
    return fmt::format("${}", params_.size());
  }

 private:
  // `s` matched as itself inside a LIKE pattern: its %, _ and \ escaped (an underscore is a GPU name's
  // character, not "any one").
  static std::string like_literal(const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '%' || c == '_' || c == '\\') out += '\\';
      out += c;
    }
    return out;
  }
  static std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  }
  void add(const char* pattern, const std::string& value) {
    clauses_.push_back(fmt::format(fmt::runtime(pattern), bind(value)));
  }
  void gpu_clause(const char* pattern, const char* alias, const std::string& value) {
    const std::string p = bind(value);
    if (alias != nullptr) {
      clauses_.push_back(fmt::format(fmt::runtime(pattern), alias, p));
    } else {
      clauses_.push_back(fmt::format("EXISTS (SELECT 1 FROM run_gpus gf WHERE gf.run_id = r.id AND {})",
                                     fmt::format(fmt::runtime(pattern), "gf", p)));
    }
  }

  std::vector<Value>& params_;
  std::vector<std::string> clauses_;
};

// Rows inserted by multi-row INSERTs of up to `batch` rows: one statement (prepared once) per
// full batch, far fewer round trips than a row at a time.
void insert_rows(Database& db, const std::string& table_and_columns, size_t columns,
                 std::vector<std::vector<Value>> rows, size_t batch) {
  for (size_t begin = 0; begin < rows.size(); begin += batch) {
    const size_t end = std::min(rows.size(), begin + batch);
    std::string sql = "INSERT INTO " + table_and_columns + " VALUES ";
    std::vector<Value> params;
    params.reserve((end - begin) * columns);
    for (size_t i = begin; i < end; ++i) {
      sql += i == begin ? "(" : ",(";
      for (size_t c = 0; c < columns; ++c) {
        params.push_back(std::move(rows[i][c]));
        sql += fmt::format("{}${}", c == 0 ? "" : ",", params.size());
      }
      sql += ")";
    }
    db.query(sql, params);
  }
}

void insert_lines(Database& db, int64_t id, const std::vector<std::string>& lines, size_t from) {
  std::vector<std::vector<Value>> rows;
  rows.reserve(lines.size() - from);
  for (size_t i = from; i < lines.size(); ++i) rows.push_back({id, static_cast<int64_t>(i), lines[i]});
  insert_rows(db, "run_lines (run_id, line_no, text)", 3, std::move(rows), 256);
}

void insert_metrics(Database& db, int64_t id, const std::vector<MetricPoint>& metrics) {
  std::vector<std::vector<Value>> rows;
  for (const MetricPoint* m : distinct_points(metrics)) {
    rows.push_back({id, int64_t{m->gpu}, m->metric, m->x, static_cast<int64_t>(m->n), m->median, m->low, m->high,
                    real_or_null(m->sm_clock_mhz), real_or_null(m->power_w), real_or_null(m->temperature_c),
                    static_cast<int64_t>(m->throttle & 0x7fffffffffffffffull)});
  }
  insert_rows(db,
              "run_metrics (run_id, gpu_index, metric, x, n, median, low, high, sm_clock_mhz, power_w, "
              "temperature_c, throttle)",
              12, std::move(rows), 64);
}

// A stored figure is one `history add` computed: a finite median inside its finite interval,
// from one sample or more (and no more than any run takes), at a finite x from 0 (a length, a
// size). Every stored metric is a time or a rate of something measured: none comes below 1e-9
// (a picosecond, a byte a second) or near 1e12 (a step of 30 years, a petabyte per second). A
// row saying otherwise was edited or damaged, and would print as a figure ("fleet median -nan",
// a change of 300 digits): refused naming the run and the figure.
constexpr int64_t kMostSamples = int64_t{1} << 40;
constexpr double kLargestFigure = 1e12, kSmallestFigure = 1e-9;

// A point a figure is stored at: a length or a size, from 0.
bool stored_point(double x) { return x >= 0 && x <= kLargestFigure; }

void check_stored_figure(const std::string& db, int64_t run, const std::string& metric, double x, double median,
                         double low, double high, int64_t n) {
  const bool finite = std::isfinite(median) && std::isfinite(low) && std::isfinite(high) && std::isfinite(x);
  const bool plausible = high <= kLargestFigure && low >= kSmallestFigure && stored_point(x);
  if (!finite || !plausible || median < 0 || low > median || median > high || n < 1 || n > kMostSamples) {
    throw WorkError(fmt::format("history database {}: run {}'s {} at {:g} holds median {} [{}, {}] of {} samples: no "
                                "figure `history add` stores (the database was edited or damaged)",
                                db, run, printable(metric), x, median, low, high, n));
  }
}

// A run's telemetry beside a figure, where it has some, is what a GPU reports: a clock, a power
// and a temperature in the ranges of any GPU. A value outside was edited in, and would print in
// `fleet` as a reading (1e308 W).
void check_stored_telemetry(const std::string& db, int64_t run, const MetricPoint& m) {
  const auto refuse = [&](const char* what, double v) {
    return WorkError(fmt::format("history database {}: run {}'s {} at {:g} holds {} {}: no reading of a GPU (the "
                                 "database was edited or damaged)", db, run, printable(m.metric), m.x, what, v));
  };
  if (m.sm_clock_mhz && !(*m.sm_clock_mhz >= 0 && *m.sm_clock_mhz <= 10000)) throw refuse("an SM clock of MHz", *m.sm_clock_mhz);
  if (m.power_w && !(*m.power_w >= 0 && *m.power_w <= 10000)) throw refuse("a power of W", *m.power_w);
  if (m.temperature_c && !(*m.temperature_c >= -60 && *m.temperature_c <= 200)) {
    throw refuse("a temperature of degrees C", *m.temperature_c);
  }
}

// A GPU index as records allow them (records/context_record.hpp); `what` holds it ("GPU index",
// "a figure of GPU").
int checked_gpu_index(const std::string& db, int64_t run, int64_t index, const char* what) {
  if (index < 0 || index > kMaxGpuIndex) {
    throw WorkError(fmt::format("history database {}: run {} holds {} {}: no GPU index `history add` stores (the "
                                "database was edited or damaged)", db, run, what, index));
  }
  return static_cast<int>(index);
}

// A figure's GPU is one its run lists, where the run lists any (a peer's log that names no GPU,
// or a decomposition of another machine's trace, lists none): a figure moved to another index
// would count under no GPU, or another run's.
void check_figure_gpu_listed(const std::string& db, int64_t run, const std::string& metric, double x, int gpu,
                             bool listed, int64_t gpus_listed) {
  if (!listed && gpus_listed > 0) {
    throw WorkError(fmt::format("history database {}: run {}'s {} at {:g} is of GPU {}, which the run does not list "
                                "(the database was edited or damaged)", db, run, printable(metric), x, gpu));
  }
}

// Our measuring commands list the GPUs they measured on (their context record's fingerprint): such
// a run listing none had its GPU rows deleted, and its figures would count under no GPU. Peers'
// logs that name no GPU, and `decompose` of another machine's trace, list none by nature.
void check_run_lists_its_gpus(const std::string& db, int64_t run, const std::string& format, const std::string& command,
                              int64_t gpus_listed) {
  static const std::set<std::string> measuring = {"train", "mamf", "attention", "bandwidth", "nccl"};
  if (gpus_listed == 0 && format == "upgradebench" && measuring.contains(command)) {
    throw WorkError(fmt::format("history database {}: run {} ({} records) lists no GPU, and {} records name the GPUs "
                                "they ran on (the database was edited or damaged)", db, run, printable(command),
                                printable(command)));
  }
}

// A run's figure and telemetry, checked as above.
MetricPoint metric_of(const Row& row, size_t first, const std::string& db, int64_t run) {
  MetricPoint m;
  m.gpu = checked_gpu_index(db, run, row.integer(first), "a figure of GPU");
  m.metric = row.text(first + 1);
  m.x = row.real(first + 2);
  const int64_t n = row.integer(first + 3);
  m.median = row.real(first + 4);
  m.low = row.real(first + 5);
  m.high = row.real(first + 6);
  check_stored_figure(db, run, m.metric, m.x, m.median, m.low, m.high, n);
  m.n = static_cast<size_t>(n);
  m.sm_clock_mhz = row.optional_real(first + 7);
  m.power_w = row.optional_real(first + 8);
  m.temperature_c = row.optional_real(first + 9);
  m.throttle = static_cast<uint64_t>(row.integer(first + 10));
  check_stored_telemetry(db, run, m);
  return m;
}

// A run's date is empty or one `history add` stored (a UTC timestamp): text edited in
// ("yesterday") would sort among the real dates.
std::string stored_date(const std::string& db, int64_t run, std::string date) {
  if (!date.empty() && !is_timestamp(date)) {
    throw WorkError(fmt::format("history database {}: run {}'s date \"{}\" is no date `history add` stores (the "
                                "database was edited or damaged)", db, run, printable(date)));
  }
  return date;
}

// A run's ranks, from its `line_count` and `world_size` columns of `row`, checked against the
// counts `history add` stores: lines from none up, ranks as a job's records allow them. NULL
// ranks (a run of one GPU stored before the column) are 1.
int64_t checked_world_size(const std::string& db, int64_t run, const Row& row, size_t lines_column,
                           size_t world_column) {
  const int64_t lines = row.integer(lines_column);
  const int64_t world_size = row.at(world_column) ? row.integer(world_column) : 1;
  if (lines < 0 || world_size < 1 || world_size > (int64_t{1} << 20)) {
    throw WorkError(fmt::format("history database {}: run {} holds {} lines of {} ranks: no run `history add` stores "
                                "(the database was edited or damaged)", db, run, lines, world_size));
  }
  return world_size;
}

// A run's own columns, read by summary_of; queries add theirs after them.
constexpr const char* kRunColumns =
    "r.id, r.run_key, r.kind, r.command, r.format, r.date, r.host, r.model, r.source, r.added, r.line_count, "
    "r.workload, r.world_size, r.provenance";
constexpr size_t kRunColumnCount = 14;

RunSummary summary_of(const Row& row, const std::string& db) {
  RunSummary s;
  s.id = row.integer(0);
  s.key = row.text(1);
  s.kind = row.text(2);
  s.command = row.text(3);
  s.format = row.text(4);
  s.date = stored_date(db, s.id, row.text(5));
  s.host = row.text(6);
  s.model = row.text(7);
  s.source = row.text(8);
  s.added = row.text(9);
  s.lines = row.integer(10);
  s.workload = row.text(11);
  s.world_size = checked_world_size(db, s.id, row, 10, 12);
  s.provenance = row.text(13);
  return s;
}

constexpr const char* kMetricColumns =
    "m.gpu_index, m.metric, m.x, m.n, m.median, m.low, m.high, m.sm_clock_mhz, m.power_w, m.temperature_c, m.throttle";

std::vector<std::string> lines_of(Database& db, int64_t id) {
  std::vector<std::string> out;
  for (const Row& r : db.query("SELECT text FROM run_lines WHERE run_id = $1 ORDER BY line_no", {id})) out.push_back(r.text(0));
  return out;
}

// Whether `run`, a peer's log, is stored run `id` grown since (a sweep still running when it was
// added): the same GPUs and stack as its header lines say them, the stored run's measured lines
// (says_where_or_when's others) begin the file's, and the file has more.
bool grows_peer_run(Database& db, int64_t id, const StoredRun& run) {
  std::vector<std::string> gpus, gpus_now;
  for (const Row& r : db.query("SELECT name FROM run_gpus WHERE run_id = $1 ORDER BY gpu_index", {id})) gpus.push_back(r.text(0));
  std::vector<StoredGpu> sorted = run.gpus;
  std::sort(sorted.begin(), sorted.end(), [](const StoredGpu& a, const StoredGpu& b) { return a.index < b.index; });
  for (const StoredGpu& g : sorted) gpus_now.push_back(g.name);
  std::map<std::string, std::string> stack;
  for (const Row& r : db.query("SELECT component, version FROM run_stack WHERE run_id = $1", {id})) stack[r.text(0)] = r.text(1);
  if (gpus != gpus_now || stack != run.stack) return false;
  const auto measured = [](const std::vector<std::string>& lines) {
    std::vector<std::string> out;
    for (const std::string& l : lines) {
      if (!says_where_or_when(l)) out.push_back(l);
    }
    return out;
  };
  const std::vector<std::string> before = measured(lines_of(db, id)), now = measured(run.lines);
  return now.size() > before.size() && std::equal(before.begin(), before.end(), now.begin());
}

// A new run's id holds no rows yet: rows under it were left by a run deleted by hand (or a
// damaged file), and would join the new run's lines and figures.
void refuse_rows_of_unlisted_run(Database& db, int64_t id) {
  for (const char* table : {"run_gpus", "run_stack", "run_lines", "run_metrics"}) {
    if (!db.query(fmt::format("SELECT 1 FROM {} WHERE run_id = $1 LIMIT 1", table), {id}).empty()) {
      throw WorkError(fmt::format("history database {}: {} holds rows of run {}, which it does not list (the database "
                                  "was edited or damaged): delete those rows, or add to a new database", db.name(),
                                  table, id));
    }
  }
}

// The file a stored run was added from.
std::string source_of(Database& db, int64_t id) {
  const std::vector<Row> r = db.query("SELECT source FROM runs WHERE id = $1", {id});
  return r.empty() ? "?" : printable(r.front().text(0));
}

}  // namespace

std::string_view to_string(AddStatus s) {
  switch (s) {
    case AddStatus::added: return "added";
    case AddStatus::grown: return "grown";
    case AddStatus::unchanged: return "already stored";
    case AddStatus::same_measurement: return "same measurement";
  }
  return "added";
}

HistoryStore::HistoryStore(const std::string& spec, Access access) : db_(open_database(spec, access)) {
  if (access == Access::read_write) {
    migrate(*db_);
    return;
  }
  // Reading creates nothing: a role or a user that may only read serves the reading commands. An
  // SQLite history of an older schema is brought up to date where this user may write it (a build
  // upgraded under one's own database), and said otherwise. A PostgreSQL one is a team's: a
  // reporting query never changes its schema under the others' clients (history add does).
  if (!is_postgres(spec) && is_older_schema(*db_)) {
    try {
      std::unique_ptr<Database> writable = open_database(spec, Access::read_write);
      migrate(*writable);
      db_ = std::move(writable);
      return;
    } catch (const std::runtime_error&) {
      // not this user's to write: check_schema says so
    }
  }
  check_schema(*db_);
}

HistoryStore::HistoryStore(std::unique_ptr<Database> db) : db_(std::move(db)) { migrate(*db_); }

std::vector<AddOutcome> HistoryStore::add_file(const std::string& path, const RunCheck& check) {
  return add_runs(runs_of_file(LineSource::file(path), check), path);
}

std::vector<AddOutcome> HistoryStore::add_runs(const std::vector<StoredRun>& runs, const std::string& source) {
  Transaction t(*db_);
  std::vector<AddOutcome> out;
  for (const StoredRun& run : runs) {
    out.push_back(add_run(run, source));
    // A run stored already is as it was stored, or the database was edited: a grown run's new rows
    // would take the edit in under a digest of their own.
    if (out.back().status == AddStatus::added) store_run_digest(*db_, out.back().run_id);
    dist::fault_point("history_add", 0);  // tests: a process killed mid-file leaves nothing
  }
  t.commit();
  return out;
}

AddOutcome HistoryStore::add_run(const StoredRun& run, const std::string& source) {
  AddOutcome o{AddStatus::added, 0, run.key, run.kind, run.command, run.date, run.lines.size(), run.metrics.size(),
               run.warnings};
  // One card under two names: a card (its UUID) stored under another GPU model is misnamed in one
  // of the two, and the fleet and trends would count its figures under both.
  for (const StoredGpu& g : run.gpus) {
    if (g.uuid.empty()) continue;
    const std::vector<Row> named = db_->query("SELECT r.source, g.name FROM run_gpus g JOIN runs r ON r.id = g.run_id "
                                              "WHERE g.uuid = $1 AND g.name <> $2 LIMIT 1", {g.uuid, g.name});
    if (!named.empty()) {
      throw UsageError(fmt::format("GPU {} is {} here and {} in the history (added from {}): one card under two "
                                   "names; give each GPU's own measurements", printable(g.uuid), printable(g.name),
                                   printable(named.front().text(1)), printable(named.front().text(0))));
    }
  }
  const std::string lock = db_->dialect() == Dialect::postgresql ? " FOR UPDATE" : "";
  std::vector<Row> existing = db_->query("SELECT id, line_count FROM runs WHERE run_key = $1" + lock, {run.key});
  const int64_t own_id = existing.empty() ? -1 : existing.front().integer(0);
  // The figures of a stored run under another context or header (a copy with its date or host
  // edited, a length added or left out) are the measurement already stored (one_measurement).
  // Candidates: the runs holding one of its points with as many samples and its median (to
  // printing precision), or, for a training point, with another count of steps and the median
  // among these steps' times (a copy with steps left out; a fleet's reruns, of as many steps, are
  // not re-read for it). Their figures are read again from their kept lines, with the steps and
  // summaries behind them.
  std::set<int64_t> candidates;
  const auto add_candidates = [&](const std::string& where, const std::vector<Value>& params) {
    // Of runs the runs table lists: figures left by a run deleted by hand are no stored measurement.
    for (const Row& r : db_->query("SELECT DISTINCT m.run_id FROM run_metrics m JOIN runs r ON r.id = m.run_id WHERE "
                                   "m.metric = $1 AND m.x = $2 AND " + where + " AND m.run_id <> $6 LIMIT 64", params)) {
      candidates.insert(r.integer(0));
    }
  };
  for (const MetricPoint* m : compared_points(run.metrics)) {
    const auto n = static_cast<int64_t>(m->n);
    const double a = m->median * (1 - 1e-9), b = m->median * (1 + 1e-9);
    add_candidates("n = $3 AND median BETWEEN $4 AND $5", {m->metric, m->x, n, std::min(a, b), std::max(a, b), own_id});
    if (!m->steps.empty()) {
      const auto [lo, hi] = std::minmax_element(m->steps.begin(), m->steps.end(),
                                                [](const auto& x, const auto& y) { return x.second < y.second; });
      add_candidates("n <> $3 AND median BETWEEN $4 AND $5",
                     {m->metric, m->x, n, lo->second * (1 - 1e-9), hi->second * (1 + 1e-9), own_id});
    }
    if (candidates.size() >= 256) break;
  }
  for (const int64_t c : candidates) {
    const std::vector<Row> format = db_->query("SELECT format, run_key FROM runs WHERE id = $1", {c});
    // The run itself, stored by another writer since this one looked its key up (PostgreSQL's
    // read committed): the key path below says what it is (already stored, or grown).
    if (!format.empty() && format.front().text(1) == run.key) {
      existing = db_->query("SELECT id, line_count FROM runs WHERE id = $1" + lock, {c});
      break;
    }
    std::vector<MetricPoint> stored;
    try {
      stored = stored_figures(lines_of(*db_, c), format.empty() ? "" : format.front().text(0), fmt::format("run {}", c));
    } catch (const std::runtime_error&) {
      continue;  // a stored run this build no longer reads is no measurement to match
    }
    if (!one_measurement(run.metrics, stored)) continue;
    o.run_id = c;
    o.status = run.format != "upgradebench" && grows_peer_run(*db_, c, run) ? AddStatus::grown : AddStatus::same_measurement;
    if (o.status == AddStatus::grown) {  // a peer's log still being written when it was added: its key and lines now
      check_run_digest(*db_, c);
      db_->query("UPDATE runs SET run_key = $1, line_count = $2, kind = $3 WHERE id = $4",
                 {run.key, static_cast<int64_t>(run.lines.size()), run.kind, c});
      db_->query("DELETE FROM run_lines WHERE run_id = $1", {c});
      db_->query("DELETE FROM run_metrics WHERE run_id = $1", {c});
      insert_lines(*db_, c, run.lines, 0);
      insert_metrics(*db_, c, run.metrics);
      store_run_digest(*db_, c);
    }
    return o;
  }
  if (existing.empty()) {
    const std::vector<Row> inserted = db_->query(
        "INSERT INTO runs (run_key, kind, command, format, date, host, model, provenance, source, added, line_count, "
        "workload, world_size) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (run_key) DO NOTHING RETURNING id",
        {run.key, run.kind, run.command, run.format, text_or_null(run.date), text_or_null(run.host),
         text_or_null(run.model), text_or_null(run.provenance), source, utc_now_iso8601(),
         static_cast<int64_t>(run.lines.size()), run.workload, run.world_size});
    if (inserted.empty()) {  // another writer stored it between our look and our insert
      existing = db_->query("SELECT id, line_count FROM runs WHERE run_key = $1" + lock, {run.key});
    } else {
      o.run_id = inserted.front().integer(0);
      refuse_rows_of_unlisted_run(*db_, o.run_id);
      std::vector<std::vector<Value>> gpus, stack;
      for (const StoredGpu& g : run.gpus) gpus.push_back({o.run_id, int64_t{g.index}, g.name, text_or_null(g.uuid)});
      for (const auto& [component, version] : run.stack) stack.push_back({o.run_id, component, version});
      insert_rows(*db_, "run_gpus (run_id, gpu_index, name, uuid)", 4, std::move(gpus), 64);
      insert_rows(*db_, "run_stack (run_id, component, version)", 3, std::move(stack), 64);
      insert_lines(*db_, o.run_id, run.lines, 0);
      insert_metrics(*db_, o.run_id, run.metrics);
      return o;
    }
  }
  o.run_id = existing.front().integer(0);
  const auto stored = static_cast<size_t>(existing.front().integer(1));
  if (run.format != "upgradebench") {  // a peer's log of the same measured lines: the run stored
    o.status = lines_of(*db_, o.run_id) == run.lines ? AddStatus::unchanged : AddStatus::same_measurement;
    return o;
  }
  // Its context record is a stored run's: the file is that run, as stored or grown since (still
  // being written when it was added). Lines that differ from the stored ones are another
  // measurement under a copied context record, and are refused rather than taken for either.
  const std::vector<Row> kept = db_->query("SELECT line_no, text FROM run_lines WHERE run_id = $1 ORDER BY line_no", {o.run_id});
  for (const Row& r : kept) {
    const auto i = static_cast<size_t>(r.integer(0));
    if (i < run.lines.size() && r.text(1) != run.lines[i]) {
      throw WorkError(fmt::format("{}: line {} differs from run {} stored with the same context record (from {}): a "
                                  "rewritten or edited file, not a run grown since; a measurement of its own has a "
                                  "context record of its own", source, i + 1, o.run_id, source_of(*db_, o.run_id)));
    }
  }
  if (stored >= run.lines.size()) {
    o.status = AddStatus::unchanged;
    return o;
  }
  // Grown since it was stored: the new lines, and the figures again.
  check_run_digest(*db_, o.run_id);
  o.status = AddStatus::grown;
  insert_lines(*db_, o.run_id, run.lines, std::min(stored, kept.size()));
  db_->query("DELETE FROM run_metrics WHERE run_id = $1", {o.run_id});
  insert_metrics(*db_, o.run_id, run.metrics);
  // Its kind too: a run stored from its context record alone becomes what its records say.
  db_->query("UPDATE runs SET line_count = $1, kind = $2 WHERE id = $3",
             {static_cast<int64_t>(run.lines.size()), run.kind, o.run_id});
  store_run_digest(*db_, o.run_id);
  return o;
}

std::vector<RunSummary> HistoryStore::list(const RunFilter& f, size_t limit) const {
  std::vector<Value> params;
  Where where(params, f, nullptr);
  const std::string sql = fmt::format(
      "SELECT {}, (SELECT COUNT(*) FROM run_gpus g WHERE g.run_id = r.id), "
      "(SELECT MIN(g.name) FROM run_gpus g WHERE g.run_id = r.id), "
      "(SELECT COUNT(*) FROM run_metrics m WHERE m.run_id = r.id) FROM runs r{} ORDER BY r.date, r.id LIMIT {}",
      kRunColumns, where.sql(), where.bind(static_cast<int64_t>(limit)));
  std::vector<RunSummary> out;
  for (const Row& row : db_->query(sql, params)) {
    RunSummary s = summary_of(row, db_->name());
    check_run_lists_its_gpus(db_->name(), s.id, s.format, s.command, row.integer(kRunColumnCount));
    check_run_digest(*db_, s.id);
    s.gpus = std::max(row.integer(kRunColumnCount), s.world_size);  // a peer's log of 8 ranks names one GPU
    s.gpu = row.text(kRunColumnCount + 1);
    s.metrics = row.integer(kRunColumnCount + 2);
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<RunDetail> HistoryStore::show(int64_t id, const FigureCheck& check) const {
  const std::vector<Row> rows =
      db_->query(fmt::format("SELECT {} FROM runs r WHERE r.id = $1", kRunColumns), {id});
  if (rows.empty()) return std::nullopt;
  RunDetail d;
  d.run = summary_of(rows.front(), db_->name());
  for (const Row& g : db_->query("SELECT gpu_index, name, uuid FROM run_gpus WHERE run_id = $1 ORDER BY gpu_index", {id})) {
    d.gpus.push_back({checked_gpu_index(db_->name(), id, g.integer(0), "GPU index"), g.text(1), g.text(2)});
  }
  for (const Row& s : db_->query("SELECT component, version FROM run_stack WHERE run_id = $1 ORDER BY component", {id})) {
    d.stack.emplace_back(s.text(0), s.text(1));
  }
  for (const Row& m : db_->query(fmt::format("SELECT {}, m.run_id FROM run_metrics m WHERE m.run_id = $1 ORDER BY m.metric, m.x, m.gpu_index",
                                             kMetricColumns), {id})) {
    d.metrics.push_back(metric_of(m, 0, db_->name(), id));
    const MetricPoint& p = d.metrics.back();
    const bool listed = std::any_of(d.gpus.begin(), d.gpus.end(), [&](const StoredGpu& g) { return g.index == p.gpu; });
    check_figure_gpu_listed(db_->name(), id, p.metric, p.x, p.gpu, listed, static_cast<int64_t>(d.gpus.size()));
    if (check) {
      const auto g = std::find_if(d.gpus.begin(), d.gpus.end(), [&](const StoredGpu& x) { return x.index == p.gpu; });
      check(id, g == d.gpus.end() ? "" : g->name, p.metric, p.x, p.median);
    }
  }
  check_run_lists_its_gpus(db_->name(), id, d.run.format, d.run.command, static_cast<int64_t>(d.gpus.size()));
  check_run_digest(*db_, id);  // after the checks that name what is wrong, where one applies
  d.run.gpus = std::max(static_cast<int64_t>(d.gpus.size()), d.run.world_size);
  d.run.gpu = d.gpus.empty() ? "" : d.gpus.front().name;
  d.run.metrics = static_cast<int64_t>(d.metrics.size());
  return d;
}

std::vector<MetricInfo> HistoryStore::metrics(const RunFilter& f) const {
  std::vector<Value> params;
  Where where(params, f, nullptr);
  const std::string sql = fmt::format(
      "SELECT m.metric, m.x, COUNT(DISTINCT m.run_id), MIN(m.run_id) AS run_id FROM run_metrics m "
      "JOIN runs r ON r.id = m.run_id{} "
      "GROUP BY m.metric, m.x ORDER BY m.metric, m.x", where.sql());
  std::vector<MetricInfo> out;
  for (const Row& row : db_->query(sql, params)) {
    if (const double x = row.real(1); !stored_point(x)) {
      throw WorkError(fmt::format("history database {}: {} is stored at {:g}, no point `history add` stores (the "
                                  "database was edited or damaged)", db_->name(), printable(row.text(0)), x));
    }
    if (out.empty() || out.back().metric != row.text(0)) out.push_back({row.text(0), 0, {}});
    out.back().points.push_back(row.real(1));
  }
  // The runs that hold a metric, at any of its points (runs of other lengths are runs of it too).
  std::map<std::string, int64_t> runs;
  for (const Row& row : db_->query(fmt::format("SELECT m.metric, COUNT(DISTINCT m.run_id) FROM run_metrics m JOIN runs r "
                                               "ON r.id = m.run_id{} GROUP BY m.metric", where.sql()), params)) {
    runs[row.text(0)] = row.integer(1);
  }
  for (MetricInfo& m : out) m.runs = runs[m.metric];
  // The runs listed are held to their rows' digest, as list holds them (a metric renamed by hand).
  for (const Row& row : db_->query(fmt::format("SELECT DISTINCT m.run_id FROM run_metrics m JOIN runs r ON r.id = m.run_id{} "
                                               "ORDER BY m.run_id", where.sql()), params)) {
    check_run_digest(*db_, row.integer(0));
  }
  return out;
}

std::vector<double> HistoryStore::points(const std::string& metric, const RunFilter& f) const {
  std::vector<Value> params{metric};
  Where where(params, f, nullptr);
  std::vector<double> out;
  for (const Row& row : db_->query(fmt::format("SELECT DISTINCT m.x FROM run_metrics m JOIN runs r ON r.id = m.run_id{} "
                                               "ORDER BY m.x", where.sql("m.metric = $1")), params)) {
    out.push_back(row.real(0));
  }
  return out;
}

namespace {

// The kind of run (runs.kind) whose figures a metric is of: "mamf.tflops.bf16" -> "mamf".
std::string kind_of_metric(const std::string& metric) {
  static const std::map<std::string, std::string> kKinds = {{"train", "training"}, {"mamf", "mamf"},
                                                            {"attention", "attention"}, {"nccl", "nccl"},
                                                            {"bandwidth", "bandwidth"}, {"decompose", "decomposition"}};
  const auto it = kKinds.find(metric.substr(0, metric.find('.')));
  return it == kKinds.end() ? std::string() : it->second;
}

}  // namespace

// A run of the metric's kind that the filter selects and the figures' query did not return may
// have had its figures deleted or renamed by hand: held to its digest too, so that it is said,
// not left out of the trend or the fleet without a word.
void HistoryStore::add_runs_of_its_kind(const std::string& metric, const RunFilter& f, std::set<int64_t>& checked) const {
  const std::string kind = kind_of_metric(metric);
  if (kind.empty()) return;
  std::vector<Value> params{kind};
  Where where(params, f, "g");
  for (const Row& row : db_->query(fmt::format("SELECT DISTINCT r.id FROM runs r LEFT JOIN run_gpus g ON g.run_id = r.id{} "
                                               "ORDER BY r.id", where.sql("r.kind = $1")), params)) {
    checked.insert(row.integer(0));
  }
}

std::vector<TrendRun> HistoryStore::trend_rows(const std::string& metric, double x, const std::string& by,
                                               const RunFilter& f, const FigureCheck& check) const {
  std::vector<Value> params{metric, x, by};
  Where where(params, f, "g");
  const std::string sql = fmt::format(
      "SELECT r.id, r.date, r.host, g.name, s.version, m.n, m.median, m.low, m.high, r.workload, r.provenance, "
      "r.line_count, r.world_size, m.gpu_index, (SELECT COUNT(*) FROM run_gpus l WHERE l.run_id = r.id), "
      "r.format, r.command FROM run_metrics m "
      "JOIN runs r ON r.id = m.run_id "
      "LEFT JOIN run_gpus g ON g.run_id = m.run_id AND g.gpu_index = m.gpu_index "
      "LEFT JOIN run_stack s ON s.run_id = r.id AND s.component = $3{} ORDER BY r.id, m.gpu_index",
      where.sql("m.metric = $1 AND m.x = $2"));
  std::vector<TrendRun> out;
  std::set<int64_t> checked;  // runs whose rows are held to their digest, after the checks that name what is wrong
  for (const Row& row : db_->query(sql, params)) {
    TrendRun t;
    t.run_id = row.integer(0);
    t.date = stored_date(db_->name(), t.run_id, row.text(1));
    t.host = row.text(2);
    t.gpu = row.text(3);
    t.version = row.text(4);
    check_stored_figure(db_->name(), t.run_id, metric, x, row.real(6), row.real(7), row.real(8), row.integer(5));
    t.figure = {row.real(6), row.real(7), row.real(8), static_cast<size_t>(row.integer(5))};
    t.workload = row.text(9);
    t.example_data = !row.text(10).empty();
    checked_world_size(db_->name(), t.run_id, row, 11, 12);
    const int gpu = checked_gpu_index(db_->name(), t.run_id, row.integer(13), "a figure of GPU");
    check_figure_gpu_listed(db_->name(), t.run_id, metric, x, gpu, row.at(3).has_value(), row.integer(14));
    check_run_lists_its_gpus(db_->name(), t.run_id, row.text(15), row.text(16), row.integer(14));
    if (row.integer(14) > 1) t.gpu_index = gpu;
    if (check) check(t.run_id, t.gpu, metric, x, t.figure.median);
    checked.insert(t.run_id);
    out.push_back(std::move(t));
  }
  add_runs_of_its_kind(metric, f, checked);
  for (const int64_t run : checked) check_run_digest(*db_, run);
  return out;
}

std::vector<FleetSample> HistoryStore::fleet_rows(const std::string& metric, double x, const RunFilter& f,
                                                  const FigureCheck& check) const {
  std::vector<Value> params{metric, x};
  Where where(params, f, "g");
  const std::string sql = fmt::format(
      "SELECT r.id, r.date, r.host, g.name, g.uuid, r.workload, {}, r.line_count, r.world_size, "
      "(SELECT COUNT(*) FROM run_gpus l WHERE l.run_id = r.id), r.format, r.command FROM run_metrics m "
      "JOIN runs r ON r.id = m.run_id "
      "LEFT JOIN run_gpus g ON g.run_id = m.run_id AND g.gpu_index = m.gpu_index{}",
      kMetricColumns, where.sql("m.metric = $1 AND m.x = $2"));
  std::vector<FleetSample> out;
  std::set<int64_t> checked;  // runs whose rows are held to their digest, after the checks that name what is wrong
  for (const Row& row : db_->query(sql, params)) {
    FleetSample s;
    s.run_id = row.integer(0);
    s.date = stored_date(db_->name(), s.run_id, row.text(1));
    s.host = row.text(2);
    s.gpu_name = row.text(3);
    s.uuid = row.text(4);
    s.workload = row.text(5);
    s.point = metric_of(row, 6, db_->name(), s.run_id);
    checked_world_size(db_->name(), s.run_id, row, 17, 18);
    check_figure_gpu_listed(db_->name(), s.run_id, metric, x, s.point.gpu, row.at(3).has_value(), row.integer(19));
    check_run_lists_its_gpus(db_->name(), s.run_id, row.text(20), row.text(21), row.integer(19));
    if (check) check(s.run_id, s.gpu_name, metric, x, s.point.median);
    checked.insert(s.run_id);
    s.gpu_index = s.point.gpu;
    out.push_back(std::move(s));
  }
  // The stacks of the runs holding the figure, in one query (the fleet names those that differ).
  std::map<int64_t, std::map<std::string, std::string>> stacks;
  for (const Row& r : db_->query("SELECT s.run_id, s.component, s.version FROM run_stack s WHERE s.run_id IN "
                                 "(SELECT m.run_id FROM run_metrics m WHERE m.metric = $1 AND m.x = $2)", {metric, x})) {
    if (checked.contains(r.integer(0))) stacks[r.integer(0)][r.text(1)] = r.text(2);
  }
  for (FleetSample& s : out) s.stack = stacks[s.run_id];
  // One card is one GPU model: a UUID under two names (`history add` refuses it) was edited in,
  // and would count one card's figures in two fleets.
  std::map<std::string, const FleetSample*> named;
  for (const FleetSample& s : out) {
    if (s.uuid.empty()) continue;
    const auto [it, first] = named.emplace(s.uuid, &s);
    if (!first && it->second->gpu_name != s.gpu_name) {
      throw WorkError(fmt::format("history database {}: GPU {} is {} in run {} and {} in run {}: one card under two "
                                  "names (the database was edited or damaged)", db_->name(), printable(s.uuid),
                                  printable(it->second->gpu_name), it->second->run_id, printable(s.gpu_name), s.run_id));
    }
  }
  add_runs_of_its_kind(metric, f, checked);
  for (const int64_t run : checked) check_run_digest(*db_, run);
  return out;
}

LineSource HistoryStore::run_text(const std::vector<int64_t>& ids, const std::string& name) const {
  std::vector<std::string> lines;
  for (int64_t id : ids) {
    if (db_->query("SELECT id FROM runs WHERE id = $1", {id}).empty()) {
      throw UsageError(fmt::format("{}: no run {} in the history database {} (see history list)", name, id, db_->name()));
    }
    check_run_digest(*db_, id);  // its lines as `history add` stored them
    for (const Row& row : db_->query("SELECT text FROM run_lines WHERE run_id = $1 ORDER BY line_no", {id})) {
      lines.push_back(row.text(0));
    }
  }
  // The last line as the file had it, possibly cut short (a log still being written when it was
  // added): read back as the file was, a damaged last line left out with a warning.
  return LineSource::lines(std::move(lines), true, name);
}

}  // namespace ub::history
