// The history database, for real: every test runs against an SQLite file and against a
// PostgreSQL server started from Debian's packages (skipped with a message where none is
// installed). Idempotent adds, a file all-or-nothing, runs that grow, filters, trends from the
// guide's torch versions, concurrent writers in separate processes, a writer killed mid-file, the
// schema's version, and records added as a command writes them.
#include <gtest/gtest.h>

#include <limits>

#include <fmt/format.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "analysis/history/trend.hpp"
#include "base/error.hpp"
#include "base/line_source.hpp"
#include "records/record_file.hpp"
#include "store/history_store.hpp"
#include "store/record_sink.hpp"
#include "store/run_digest.hpp"
#include "store/schema.hpp"
#include "postgres_server.hpp"

namespace ub::history {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = UB_FIXTURES_DIR;
const std::string kSweep = std::string(UB_DATA_DIR) + "/examples/sweep_h200_llama-3.1-8b-4layers.jsonl";

std::vector<std::string> torch_logs() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kFixtures + "/torch_versions")) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The example sweep added to `store`: its first run's id (0 when it stored none).
int64_t first_run_of_the_example_sweep(HistoryStore& store) {
  store.add_file(kSweep);
  const std::vector<RunSummary> runs = store.list({}, 100);
  return runs.empty() ? 0 : runs.front().id;
}

// `read` throws a WorkError naming the database `db` and saying `says`.
template <class Read>
void expect_refused(Database& db, const std::string& says, const Read& read) {
  try {
    read();
    ADD_FAILURE() << "accepted: " << says;
  } catch (const WorkError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("history database " + db.name()), std::string::npos) << what;
    EXPECT_NE(what.find(says), std::string::npos) << what;
  }
}

class HistoryStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / fmt::format("ub-history-{}-{}", getpid(), ++counter_);
    fs::create_directories(dir_);
    if (GetParam() == "sqlite") {
      spec_ = (dir_ / "history.sqlite").string();
    } else {
      std::string why;
      spec_ = ub::testing::fresh_postgres_database(why);
      if (spec_.empty()) GTEST_SKIP() << why;
    }
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string write_file(const std::string& name, const std::vector<std::string>& lines) const {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path);
    for (const std::string& l : lines) out << l << "\n";
    return path;
  }

  // Runs `work` in a child process with its own connection; returns its wait status.
  template <class F>
  static pid_t spawn(F work) {
    const pid_t pid = fork();
    if (pid == 0) {
      int code = 0;
      try {
        work();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child: %s\n", e.what());
        code = 1;
      }
      std::fflush(stderr);
      _exit(code);
    }
    return pid;
  }

  fs::path dir_;
  std::string spec_;
  static inline int counter_ = 0;
};

TEST_P(HistoryStoreTest, AFileAddedTwiceIsStoredOnce) {
  HistoryStore store(spec_);
  const auto first = store.add_file(kSweep);
  ASSERT_EQ(first.size(), 10u);
  for (const AddOutcome& o : first) EXPECT_EQ(o.status, AddStatus::added);
  const auto second = store.add_file(kSweep);
  for (const AddOutcome& o : second) EXPECT_EQ(o.status, AddStatus::unchanged);
  EXPECT_EQ(second[4].run_id, first[4].run_id);
  EXPECT_EQ(store.list({}, 1000).size(), 10u);
}

TEST_P(HistoryStoreTest, StoredRunsReadBackAsTheFile) {
  HistoryStore store(spec_);
  const auto added = store.add_file(kSweep);
  std::vector<int64_t> ids;
  for (const AddOutcome& o : added) ids.push_back(o.run_id);
  const std::vector<std::string> original = LineSource::file(kSweep).read_all();
  EXPECT_EQ(store.run_text(ids, "run:all").read_all(), original);
  EXPECT_THROW(store.run_text({ids.back() + 100}, "run:x"), UsageError);
}

TEST_P(HistoryStoreTest, ARunThatGrewGetsItsNewLines) {
  const std::vector<std::string> full = LineSource::file(kFixtures + "/mamf_records_h200_a.jsonl").read_all();
  ASSERT_GT(full.size(), 4u);
  const std::vector<std::string> part(full.begin(), full.begin() + 3);
  HistoryStore store(spec_);
  const auto a = store.add_file(write_file("part.jsonl", part));
  ASSERT_EQ(a.size(), 1u);
  const auto b = store.add_file(kFixtures + "/mamf_records_h200_a.jsonl");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].status, AddStatus::grown);
  EXPECT_EQ(b[0].run_id, a[0].run_id);
  EXPECT_EQ(store.run_text({a[0].run_id}, "r").read_all(), full);
  const auto detail = store.show(a[0].run_id);
  ASSERT_TRUE(detail);
  EXPECT_EQ(detail->run.lines, static_cast<int64_t>(full.size()));
  EXPECT_FALSE(detail->metrics.empty());
  EXPECT_EQ(store.add_file(write_file("part2.jsonl", part))[0].status, AddStatus::unchanged) << "fewer lines: kept";
}

TEST_P(HistoryStoreTest, ABadFileAddsNothing) {
  std::vector<std::string> t = LineSource::file(kSweep).read_all();
  // The last run's step with a negative time: its reader refuses the file after two good runs.
  std::string& bad = t.back();
  for (size_t i = t.size(); i-- > 0;) {
    if (t[i].find("\"train_step\"") != std::string::npos) {
      const size_t at = t[i].find("\"exec_time_ms\":");
      ASSERT_NE(at, std::string::npos);
      t[i].insert(at + 15, "-");
      break;
    }
  }
  (void)bad;
  HistoryStore store(spec_);
  const std::string path = write_file("bad.jsonl", t);
  try {
    store.add_file(path);
    FAIL() << "expected the file to be refused";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(store.list({}, 100).empty());
  EXPECT_THROW(store.add_file((dir_ / "missing.jsonl").string()), UsageError);
}

TEST_P(HistoryStoreTest, FiltersSelectRuns) {
  HistoryStore store(spec_);
  store.add_file(kSweep);
  for (const std::string& f : torch_logs()) store.add_file(f);
  store.add_file(kFixtures + "/mamf_finder_real_h200.txt");
  EXPECT_EQ(store.list({}, 100).size(), 17u);
  RunFilter f;
  f.command = "benchmark.py";
  EXPECT_EQ(store.list(f, 100).size(), 6u);
  f.stack = {{"torch", "2.13.0"}};
  EXPECT_EQ(store.list(f, 100).size(), 2u);
  f.stack.push_back({"cuda", "12.9"});
  EXPECT_EQ(store.list(f, 100).size(), 1u);
  RunFilter g;
  g.gpu = "h200";
  EXPECT_EQ(store.list(g, 100).size(), 17u);
  g.gpu = "b200";
  EXPECT_TRUE(store.list(g, 100).empty());
  RunFilter d;
  d.since = "2026-11-21";
  d.until = "2026-11-22";
  EXPECT_EQ(store.list(d, 100).size(), 2u) << "dates are inclusive, by their beginning";
  RunFilter k;
  k.kind = "mamf";
  const auto mamf = store.list(k, 100);
  ASSERT_EQ(mamf.size(), 1u);
  EXPECT_EQ(mamf[0].format, "mamf-finder.py");
  EXPECT_EQ(store.list({}, 3).size(), 3u);
}

TEST_P(HistoryStoreTest, TrendShowsTheGuidesTorchJump) {
  HistoryStore store(spec_);
  for (const std::string& f : torch_logs()) store.add_file(f);
  RunFilter cu130;
  cu130.stack = {{"cuda", "13.0"}};
  const Trend t = trend_of("train.tflops", 8192, "torch", store.trend_rows("train.tflops", 8192, "torch", cu130));
  ASSERT_EQ(t.groups.size(), 4u);
  EXPECT_EQ(t.groups[0].label, "2.10.0");
  EXPECT_EQ(t.groups[3].label, "2.13.0");
  ASSERT_EQ(t.steps.size(), 3u);
  EXPECT_EQ(t.steps[1].from, "2.11.0");
  EXPECT_EQ(t.steps[1].to, "2.12.0");
  EXPECT_NEAR(t.steps[1].change.change * 100, 16.3, 0.05);  // the guide: +16% (120.5 -> 140.1)
  EXPECT_TRUE(t.steps[1].change.significant());
  EXPECT_FALSE(t.steps[2].change.significant()) << "2.12.0 -> 2.13.0 is noise";
  ASSERT_TRUE(t.overall);
  EXPECT_NEAR(t.overall->change.change * 100, 19.0, 0.05);  // the guide: +19% (117.8 -> 140.2)
  const Trend cuda = trend_of("train.tflops", 8192, "cuda", store.trend_rows("train.tflops", 8192, "cuda", {}));
  EXPECT_EQ(cuda.groups.size(), 2u);
  EXPECT_EQ(cuda.groups[0].label, "12.9");
}

TEST_P(HistoryStoreTest, FleetRowsCarryEachGpusIdentity) {
  HistoryStore store(spec_);
  store.add_file(kFixtures + "/mamf_records_h200_a.jsonl");
  store.add_file(kFixtures + "/mamf_finder_real_h200.txt");
  const auto metrics = store.metrics({});
  ASSERT_FALSE(metrics.empty());
  const std::string metric = metrics[0].metric;
  const auto rows = store.fleet_rows(metric, 0, {});
  ASSERT_FALSE(rows.empty());
  for (const FleetSample& s : rows) {
    EXPECT_EQ(s.gpu_name, "NVIDIA H200");
    EXPECT_FALSE(s.uuid.empty());
  }
}

TEST_P(HistoryStoreTest, ConcurrentWritersLoseNothing) {
  { HistoryStore create(spec_); }
  const std::vector<std::string> logs = torch_logs();
  std::vector<pid_t> children;
  for (int w = 0; w < 4; ++w) {
    children.push_back(spawn([&, w] {
      HistoryStore store(spec_);
      store.add_file(kSweep);  // all four add the same file: stored once
      store.add_file(logs[static_cast<size_t>(w)]);
    }));
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer failed";
  }
  HistoryStore store(spec_);
  EXPECT_EQ(store.list({}, 100).size(), 14u);
}

TEST_P(HistoryStoreTest, AWriterKilledMidFileLeavesTheDatabaseAsItWas) {
  { HistoryStore(spec_).add_file(torch_logs()[0]); }
  const pid_t pid = spawn([&] {
    setenv("UB_FAULT", "0:history_add:kill", 1);  // SIGKILL after the first run of the file
    HistoryStore(spec_).add_file(kSweep);
  });
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  HistoryStore store(spec_);
  EXPECT_EQ(store.list({}, 100).size(), 1u) << "none of the killed file's runs";
  EXPECT_EQ(store.add_file(kSweep).size(), 10u);
  EXPECT_EQ(store.list({}, 100).size(), 11u);
}

// What opening `spec` says, or "" when it opens.
std::string opening_error(const std::string& spec) {
  try {
    HistoryStore again(spec);
    return "";
  } catch (const WorkError& e) {
    return e.what();
  }
}

TEST_P(HistoryStoreTest, ADatabaseOfANewerSchemaIsRefused) {
  // However far past this build's: a version past what an int holds (SQLite's integers are 64
  // bits, PostgreSQL's INTEGER 32) is newer, not taken for 0.
  const int64_t far = GetParam() == "sqlite" ? int64_t{1} << 62 : int64_t{2147483647};
  {
    HistoryStore store(spec_);
    store.database().query("INSERT INTO schema_version (version) VALUES ($1)", {int64_t{kSchemaVersion + 1}});
    store.database().query("INSERT INTO schema_version (version) VALUES ($1)", {far});
  }
  EXPECT_NE(opening_error(spec_).find(fmt::format("schema version {} is newer", far)), std::string::npos) << opening_error(spec_);
}

// The reading commands create and migrate nothing: a PostgreSQL role granted SELECT only (a
// team's reporting role) lists and trends what another role added; an empty database is said so.
TEST_P(HistoryStoreTest, AReaderThatMayOnlyReadCreatesNothing) {
  std::string reader = spec_;
  if (GetParam() == "postgresql") {
    const std::string role = fmt::format("ub_reader_{}_{}", getpid(), counter_);
    const std::unique_ptr<Database> admin = open_database(spec_);
    admin->execute(fmt::format("CREATE ROLE {} LOGIN", role));
    reader.replace(reader.find("user=postgres"), std::string("user=postgres").size(), "user=" + role);
    // Before any run: nothing is created, and the database is said to hold no history yet.
    try {
      HistoryStore empty(reader, Access::read_only);
      ADD_FAILURE() << "an empty database read as a history";
    } catch (const WorkError& e) {
      EXPECT_NE(std::string(e.what()).find("empty, no runs yet"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(admin->query("SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema()").empty());
    // Adding needs a role that may create the tables: said as a permission, not the server's words.
    try {
      HistoryStore writer(reader);
      ADD_FAILURE() << "a role without CREATE made the history";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("permission denied: role " + role + " may not create the history's tables"),
                std::string::npos) << e.what();
    }
    admin->execute(fmt::format("REVOKE CREATE ON SCHEMA public FROM PUBLIC; ALTER DEFAULT PRIVILEGES GRANT SELECT ON "
                               "TABLES TO {}", role));
  }
  HistoryStore(spec_).add_file(kSweep);
  const HistoryStore store(reader, Access::read_only);
  EXPECT_EQ(store.list({}, 1000).size(), 10u);
  if (GetParam() != "postgresql") return;
  try {
    HistoryStore writer(reader);
    ADD_FAILURE() << "a role that may only read added to the history";
  } catch (const UsageError& e) {
    // Each table it may not add rows to is named (a role that may only read: all of them).
    EXPECT_NE(std::string(e.what()).find("may not add rows to the table(s) run_gpus, run_lines, run_metrics, run_stack, runs, "
                                         "schema_version: grant it INSERT on them"), std::string::npos) << e.what();
  }
  // A table the role may not read is said as a permission, not as a table missing.
  open_database(spec_)->execute("REVOKE SELECT ON run_metrics FROM " + reader.substr(reader.find("user=") + 5));
  try {
    HistoryStore denied(reader, Access::read_only);
    ADD_FAILURE() << "read without SELECT on run_metrics";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("permission denied: role " + reader.substr(reader.find("user=") + 5) +
                                         " may not read the table(s) run_metrics: grant it SELECT"),
              std::string::npos) << e.what();
  }
}

// A schema_version emptied under tables that are there, or holding no number: the database was
// edited or damaged, said so naming it, not answered with the migrations' SQL errors.
TEST_P(HistoryStoreTest, ADamagedSchemaVersionIsSaidSo) {
  { HistoryStore store(spec_); store.add_file(kSweep); store.database().execute("DELETE FROM schema_version"); }
  const std::string emptied = opening_error(spec_);
  EXPECT_NE(emptied.find("its tables are there and its schema_version is empty"), std::string::npos) << emptied;
  EXPECT_EQ(emptied.find("already exists"), std::string::npos) << emptied;
  // Versions start at 1: a negative one is not an older database to bring up to date.
  for (const int64_t v : {int64_t{-1}, int64_t{0}}) {
    {
      const std::unique_ptr<Database> db = open_database(spec_);
      db->execute("DELETE FROM schema_version");
      db->query("INSERT INTO schema_version (version) VALUES ($1)", {v});
    }
    const std::string negative = opening_error(spec_);
    EXPECT_NE(negative.find("its schema_version holds something other than a version number"), std::string::npos) << v << ": " << negative;
    EXPECT_EQ(negative.find("older"), std::string::npos) << negative;
  }
  // A version written twice: no migration writes one so.
  {
    const std::unique_ptr<Database> db = open_database(spec_);
    db->execute("DELETE FROM schema_version");
    for (const int64_t v : {int64_t{kSchemaVersion}, int64_t{3}, int64_t{3}}) {
      db->query("INSERT INTO schema_version (version) VALUES ($1)", {v});
    }
  }
  const std::string twice = opening_error(spec_);
  EXPECT_NE(twice.find("its schema_version holds version 3 twice"), std::string::npos) << twice;
}

// A table or a column of the current version dropped from a database: named when it is opened,
// for writing and for reading, not answered later with the library's "no such table".
TEST_P(HistoryStoreTest, ADroppedTableOrColumnIsNamedWhenOpened) {
  const std::vector<std::pair<std::string, std::string>> drops = {
      {"DROP TABLE run_stack", "its table run_stack is missing"},
      {"ALTER TABLE run_metrics DROP COLUMN power_w", "its table run_metrics lacks the column power_w"},
  };
  int n = 0;
  for (const auto& [drop, says] : drops) {
    if (n++ > 0) {  // a database of its own for each drop
      std::string why;
      spec_ = GetParam() == "sqlite" ? (dir_ / fmt::format("history-{}.sqlite", n)).string()
                                     : ub::testing::fresh_postgres_database(why);
      ASSERT_FALSE(spec_.empty()) << why;
    }
    {
      HistoryStore store(spec_);
      store.add_file(kSweep);
      store.database().execute(drop);
    }
    const std::string writing = opening_error(spec_);
    EXPECT_NE(writing.find(says), std::string::npos) << writing;
    EXPECT_EQ(writing.find("no such"), std::string::npos) << writing;
    if (GetParam() == "sqlite") {
      try {
        HistoryStore reader(spec_, Access::read_only);
        ADD_FAILURE() << "read: " << drop;
      } catch (const WorkError& e) {
        EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
      }
    }
  }
}

// A stored figure that no `history add` computes (an infinite median, a negative one, no samples)
// is refused naming the run, not printed as a figure.
TEST_P(HistoryStoreTest, AStoredFigureNoAddComputesIsRefused) {
  HistoryStore store(spec_);
  store.add_file(kSweep);
  const std::vector<RunSummary> runs = store.list({}, 100);
  ASSERT_FALSE(runs.empty());
  store.database().query("UPDATE run_metrics SET median = $1 WHERE run_id = $2", {-5.0, runs.front().id});
  try {
    store.show(runs.front().id);
    ADD_FAILURE() << "a median of -5 was shown";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("run {}'s ", runs.front().id)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no figure `history add` stores"), std::string::npos) << e.what();
  }
}

// Beside the figures: a date, a sample count, an x and the telemetry that no `history add`
// stores (edited in) are refused naming the database and the run, never sorted or printed as if
// measured; a number column holding text names the database.
TEST_P(HistoryStoreTest, AStoredDateCountOrReadingNoAddWritesIsRefused) {
  HistoryStore store(spec_);
  const int64_t id = first_run_of_the_example_sweep(store);
  ASSERT_GT(id, 0);
  Database& db = store.database();
  const auto refused = [&](const std::string& says, const auto& read) { expect_refused(db, says, read); };
  const auto edited = [&](const std::string& sql, const std::vector<Value>& params, const std::string& says) {
    const Transaction t(db);  // rolled back at the end of the scope
    db.query(sql, params);
    refused(says, [&] { store.show(id); });
  };
  {
    const Transaction t(db);
    db.query("UPDATE runs SET date = $1 WHERE id = $2", {std::string("yesterday"), id});
    refused(fmt::format("run {}'s date \"yesterday\" is no date", id), [&] { store.list({}, 100); });
  }
  edited("UPDATE run_metrics SET power_w = $1 WHERE run_id = $2", {1e308, id}, "holds a power of W 1e+308: no reading of a GPU");
  edited("UPDATE run_metrics SET temperature_c = $1 WHERE run_id = $2", {-300.0, id}, "a temperature of degrees C -300");
  edited("UPDATE run_metrics SET gpu_index = $1 WHERE run_id = $2", {int64_t{-1}, id}, "holds a figure of GPU -1");
  edited("UPDATE runs SET world_size = $1 WHERE id = $2", {int64_t{0}, id}, "lines of 0 ranks: no run");
  {  // every reading command checks what it reads: a trend and a fleet too
    const RunDetail before = *store.show(id);
    const Transaction t(db);
    db.query("UPDATE runs SET world_size = $1 WHERE id = $2", {int64_t{0}, id});
    ASSERT_FALSE(before.metrics.empty());
    const MetricPoint& p = before.metrics.front();
    refused("lines of 0 ranks: no run", [&] { store.trend_rows(p.metric, p.x, "", {}); });
    refused("lines of 0 ranks: no run", [&] { store.fleet_rows(p.metric, p.x, {}); });
  }
  edited("UPDATE runs SET line_count = $1 WHERE id = $2", {int64_t{-5}, id}, "holds -5 lines");
  for (const double x : {std::numeric_limits<double>::infinity(), -4096.0}) {
    edited("UPDATE run_metrics SET x = $1 WHERE run_id = $2", {x, id}, "no figure `history add` stores");
    const Transaction t(db);
    db.query("UPDATE run_metrics SET x = $1 WHERE run_id = $2", {x, id});
    refused("no point `history add` stores", [&] { store.metrics({}); });
  }
  edited("UPDATE run_metrics SET median = $1, low = $1, high = $1 WHERE run_id = $2", {1e308, id},
         "no figure `history add` stores");
  // Times and rates are above zero: a zero or a vanishing one would print as an infinite change.
  for (const double tiny : {0.0, 1e-300}) {
    edited("UPDATE run_metrics SET median = $1, low = $1, high = $1 WHERE run_id = $2", {tiny, id},
           "no figure `history add` stores");
  }
  if (GetParam() == "sqlite") {  // PostgreSQL's typed columns hold neither
    edited("UPDATE run_metrics SET n = $1 WHERE run_id = $2", {std::numeric_limits<int64_t>::max(), id},
           "no figure `history add` stores");
    edited("UPDATE run_metrics SET median = $1 WHERE run_id = $2", {std::string("abc"), id},
           fmt::format("column run_metrics.median of run {} holds 'abc', not a number", id));
    const Transaction t(db);  // the points of every metric, counted over runs, still name a run holding it
    db.query("UPDATE run_metrics SET x = $1 WHERE run_id = $2", {std::string("8k"), id});
    refused(fmt::format("column run_metrics.x of run {} holds '8k', not a number", id), [&] { store.metrics({}); });
  } else {  // PostgreSQL's column names its table through the server's catalog
    const Transaction t(db);
    db.execute("ALTER TABLE run_metrics DROP CONSTRAINT run_metrics_pkey");
    db.execute("ALTER TABLE run_metrics ALTER COLUMN x DROP NOT NULL");
    db.query("UPDATE run_metrics SET x = NULL WHERE run_id = $1", {id});
    refused(fmt::format("column run_metrics.x of run {} is NULL where a number was expected", id),
            [&] { store.metrics({}); });
  }
  EXPECT_NO_THROW(store.show(id)) << "each edit was rolled back";
}

// A database of version 1 (before runs said their workload) is brought to the current version
// when opened: its runs are read again from their stored lines, and list and trend see them as
// runs added today would be.
// Rows that do not fit together, as no `history add` writes them: a figure of a GPU its run does
// not list, rows under a run id the runs table does not hold (they would join the next run
// added), one card (UUID) under two GPU names.
TEST_P(HistoryStoreTest, RowsThatDoNotFitTogetherAreRefused) {
  HistoryStore store(spec_);
  store.add_file(kFixtures + "/mamf_records_h200_a.jsonl");
  store.add_file(kFixtures + "/mamf_records_h200_b.jsonl");
  const std::vector<RunSummary> runs = store.list({}, 100);
  ASSERT_EQ(runs.size(), 2u);
  const int64_t id = runs.front().id;
  const std::string metric = store.metrics({}).at(0).metric;
  Database& db = store.database();
  const auto refused = [&](const std::string& says, const auto& read) { expect_refused(db, says, read); };
  ASSERT_FALSE(store.fleet_rows(metric, 0, {}).empty());
  {
    const Transaction t(db);  // rolled back at the end of the scope
    db.query("UPDATE run_metrics SET gpu_index = $1 WHERE run_id = $2", {int64_t{5}, id});
    const std::string says = "is of GPU 5, which the run does not list";
    refused(says, [&] { store.show(id); });
    refused(says, [&] { store.fleet_rows(metric, 0, {}); });
    refused(says, [&] { store.trend_rows(metric, 0, "cuda", {}); });
  }
  {
    const Transaction t(db);
    const std::string other = db.query("SELECT uuid FROM run_gpus WHERE run_id = $1 AND gpu_index = 0", {runs.back().id})
                                  .at(0).text(0);
    db.query("UPDATE run_gpus SET name = $1, uuid = $2 WHERE run_id = $3", {std::string("NVIDIA H100 80GB HBM3"), other, id});
    refused("one card under two names", [&] { store.fleet_rows(metric, 0, {}); });
  }
  {
    // Our mamf run with its GPU rows deleted: its figures would count under no GPU.
    const Transaction t(db);
    db.query("DELETE FROM run_gpus WHERE run_id = $1", {id});
    const std::string says = "(mamf records) lists no GPU, and mamf records name the GPUs they ran on";
    refused(says, [&] { store.show(id); });
    refused(says, [&] { store.list({}, 100); });
    refused(says, [&] { store.fleet_rows(metric, 0, {}); });
    refused(says, [&] { store.trend_rows(metric, 0, "cuda", {}); });
  }
  // A run deleted by hand, its figures left: the next run added would take its id and its rows.
  const int64_t last = runs.back().id;
  db.query("DELETE FROM runs WHERE id = $1", {last});
  try {
    store.add_file(kFixtures + "/mamf_records_h200_b.jsonl");
    if (GetParam() == "sqlite") ADD_FAILURE() << "rows of a deleted run joined a new one";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("holds rows of run {}, which it does not list", last)),
              std::string::npos) << e.what();
  }
}

// Rows edited within every bound (a figure moved, a sample count, a version, the example-data
// label, a reading) show as measured unless held to what `history add` stored: each run's digest
// of its rows tells them, in every reader.
TEST_P(HistoryStoreTest, RowsEditedSinceTheyWereStoredAreRefused) {
  HistoryStore store(spec_);
  const int64_t id = first_run_of_the_example_sweep(store);
  ASSERT_GT(id, 0);
  const RunDetail before = *store.show(id);
  ASSERT_FALSE(before.metrics.empty());
  const MetricPoint& p = before.metrics.front();
  Database& db = store.database();
  const std::string says = fmt::format("run {}'s rows are not as `history add` stored them", id);
  // A trend or a fleet of the first figure refuses the run too, whether it still reads its figure
  // or the figure was renamed or deleted (the run would be left out without a word).
  const auto edited = [&](const std::string& sql, const std::vector<Value>& params) {
    const Transaction t(db);  // rolled back at the end of the scope
    db.query(sql, params);
    expect_refused(db, says, [&] { store.show(id); });
    expect_refused(db, says, [&] { store.list({}, 100); });
    if (!db.query("SELECT 1 FROM run_metrics WHERE run_id = $1", {id}).empty()) {
      expect_refused(db, says, [&] { store.metrics({}); });
    }
    expect_refused(db, says, [&] { store.trend_rows(p.metric, p.x, "", {}); });
    expect_refused(db, says, [&] { store.fleet_rows(p.metric, p.x, {}); });
  };
  edited("UPDATE run_metrics SET median = median * 1.5, low = low * 1.5, high = high * 1.5 WHERE run_id = $1", {id});
  edited("UPDATE run_metrics SET n = n + 1 WHERE run_id = $1", {id});
  edited("UPDATE run_stack SET version = $1 WHERE run_id = $2", {std::string("99.0"), id});
  edited("UPDATE runs SET provenance = NULL, workload = $1 WHERE id = $2", {std::string("another"), id});
  edited("UPDATE run_gpus SET name = $1 WHERE run_id = $2", {std::string("NVIDIA B200"), id});
  edited("UPDATE run_metrics SET metric = $1 WHERE run_id = $2 AND metric = $3", {std::string("train.tflopz"), id, p.metric});
  edited("DELETE FROM run_metrics WHERE run_id = $1", {id});
  edited("UPDATE runs SET run_key = $1, source = $2 WHERE id = $3", {std::string("0123456789abcdef"), std::string("/elsewhere"), id});
  {  // its lines, which compare and report read as a file (run:ID)
    const Transaction t(db);
    db.query("UPDATE run_lines SET text = text || ' ' WHERE run_id = $1 AND line_no = 1", {id});
    expect_refused(db, says, [&] { store.show(id); });
    expect_refused(db, says, [&] { store.run_text({id}, "run:1"); });
  }
  // As stored, every reader reads it.
  EXPECT_EQ(store.show(id)->metrics.size(), before.metrics.size());
  EXPECT_FALSE(store.trend_rows(p.metric, p.x, "", {}).empty());
}

TEST_P(HistoryStoreTest, AVersionOneDatabaseLearnsEachRunsWorkload) {
  {
    HistoryStore store(spec_);
    store.add_file(kFixtures + "/sweep_h200.log");
    store.add_file(kSweep);
    Database& db = store.database();
    db.execute("ALTER TABLE runs DROP COLUMN workload");
    db.execute("ALTER TABLE runs DROP COLUMN world_size");
    db.execute("ALTER TABLE runs DROP COLUMN digest");
    db.execute("DELETE FROM schema_version WHERE version > 1");
  }
  HistoryStore store(spec_);
  const std::vector<RunSummary> runs = store.list({}, 100);
  ASSERT_EQ(runs.size(), 11u);
  EXPECT_EQ(runs[0].workload, "llama-3.1-8b, all layers, 8 GPUs, ZeRO-3, checkpointing, offloaded optimizer, bf16, batch 1");
  EXPECT_EQ(runs[0].gpus, 8);
  EXPECT_NE(runs[1].workload.find("4 of 32 layers, 1 GPU"), std::string::npos) << runs[1].workload;
  const std::vector<Trend> series = trends_of("train.tflops", 8192, "", store.trend_rows("train.tflops", 8192, "", {}));
  EXPECT_EQ(series.size(), 2u) << "the guide's 8-GPU job and our 4-layer step are two series";
}

// A reading command on one's own SQLite database of an older schema (upgradebench upgraded under
// it) brings it up to date and reads it; the version 6 database's runs are told apart by their
// precision recipe after it. A PostgreSQL history is a team's: a reading command leaves its schema
// to history add, and says so.
TEST_P(HistoryStoreTest, AReadingCommandBringsOnesOwnOlderDatabaseUpToDate) {
  {
    HistoryStore store(spec_);
    store.add_file(kSweep);
    store.database().execute("DELETE FROM schema_version WHERE version > 6");
  }
  if (GetParam() == "postgresql") {
    try {
      const HistoryStore reader(spec_, Access::read_only);
      FAIL() << "a reading command changed the schema of a PostgreSQL history";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("a reading command does not bring a PostgreSQL history up to date"),
                std::string::npos) << e.what();
    }
    HistoryStore writer(spec_);  // what history add opens
  }
  const HistoryStore reader(spec_, Access::read_only);
  EXPECT_EQ(reader.list({}, 100).size(), 10u);
  const std::unique_ptr<Database> db = open_database(spec_);  // held: its rows name it
  const std::vector<Row> version = db->query("SELECT MAX(version) FROM schema_version");
  EXPECT_EQ(version.front().integer(0), kSchemaVersion);
}

// A version 7 database stored another program's runs with no workload: brought up to date, they
// are of the workload their header says, and still read as stored (their digests follow).
TEST_P(HistoryStoreTest, AVersionSevenDatabaseLearnsAnotherProgramsWorkloads) {
  {
    HistoryStore store(spec_);
    store.add_file(kFixtures + "/nccl_peer_h200x2.jsonl");
    Database& db = store.database();
    db.execute("UPDATE runs SET workload = '', world_size = 1");  // as version 7 stored it, digest and all
    for (const Row& r : db.query("SELECT id FROM runs")) store_run_digest(db, r.integer(0));
    db.execute("DELETE FROM schema_version WHERE version > 7");
  }
  HistoryStore store(spec_);
  const std::vector<RunSummary> runs = store.list({}, 100);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].workload, "2 GPUs, torch.distributed");
  EXPECT_EQ(runs[0].gpus, 2);
  EXPECT_TRUE(store.show(runs[0].id).has_value());
}

// A copy of a stored sweep under other context records, with a length left out, is the
// measurement stored: each of its runs holds a point of a stored run. A length that only ran out
// of memory has no figures, and may be an observation of its own.
TEST_P(HistoryStoreTest, ACopyUnderOtherContextsIsTheStoredMeasurement) {
  HistoryStore store(spec_);
  store.add_file(kSweep);
  const size_t before = store.list({}, 100).size();
  const std::string copy = (dir_ / "copy.jsonl").string();
  {
    std::ofstream out(copy);
    bool skip = false;
    size_t runs = 0;
    for (std::string l : LineSource::file(kSweep).read_all()) {
      if (const size_t at = l.find("\"host\":\"vm\""); at != std::string::npos) {
        l.replace(at, 11, "\"host\":\"copy\"");
        skip = ++runs == 2;  // the second length left out
      }
      if (!skip) out << l << "\n";
    }
  }
  const std::vector<AddOutcome> added = store.add_file(copy);
  ASSERT_EQ(added.size(), before - 1);
  size_t same = 0;
  for (const AddOutcome& o : added) {
    if (o.metrics == 0) {
      EXPECT_EQ(o.status, AddStatus::added) << o.key;
    }
    same += o.status == AddStatus::same_measurement;
  }
  EXPECT_GE(same, 6u) << "every length timed in more than one step";
  EXPECT_EQ(store.list({}, 100).size(), before + (added.size() - same));
}

TEST_P(HistoryStoreTest, RecordsGoInAsTheyAreWritten) {
  const std::vector<std::string> source = LineSource::file(kFixtures + "/mamf_records_h200_a.jsonl").read_all();
  const std::string path = (dir_ / "live.jsonl").string();
  {
    RecordWriter writer(path);
    record_into_history(writer, spec_);
    for (size_t i = 0; i < source.size(); ++i) {
      writer.write(nlohmann::json::parse(source[i]));
      if (i == 1) {
        HistoryStore look(spec_);
        const auto runs = look.list({}, 10);
        ASSERT_EQ(runs.size(), 1u) << "the run is there from its first records";
        EXPECT_EQ(runs[0].lines, 2);
      }
    }
  }
  HistoryStore store(spec_);
  const auto runs = store.list({}, 10);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].kind, "mamf") << "no longer the context alone";
  EXPECT_EQ(runs[0].lines, static_cast<int64_t>(source.size()));
  EXPECT_GT(runs[0].metrics, 0);
  EXPECT_EQ(store.add_file(path)[0].status, AddStatus::unchanged) << "the file adds nothing more";
}

TEST_P(HistoryStoreTest, ADatabaseThatFailsMidRunLosesNoRecord) {
  const std::vector<std::string> source = LineSource::file(kFixtures + "/mamf_records_h200_a.jsonl").read_all();
  const std::string path = (dir_ / "kept.jsonl").string();
  ::testing::internal::CaptureStderr();
  {
    RecordWriter writer(path);
    record_into_history(writer, spec_);
    for (size_t i = 0; i < source.size(); ++i) {
      if (i == 2) HistoryStore(spec_).database().execute("DROP TABLE run_lines");  // the database breaks
      writer.write(nlohmann::json::parse(source[i]));
    }
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(LineSource::file(path).read_all(), source) << "every record is in the file";
  EXPECT_NE(err.find("history add " + path), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "said once: " << err;
}

INSTANTIATE_TEST_SUITE_P(Backends, HistoryStoreTest, ::testing::Values("sqlite", "postgresql"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param == "sqlite" ? "SQLite" : "PostgreSQL"; });

TEST(HistoryDatabase, AnUnreachableServerIsAUsageError) {
  try {
    open_database("postgresql:///nope?host=/nonexistent-dir&port=1&user=x&password=secret");
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot connect"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << "the password is not printed: " << e.what();
  }
  // A refused TCP connection: libpq's two lines, the second indented with a tab, read as one line.
  try {
    open_database("postgresql://u@127.0.0.1:1/db");
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Connection refused"), std::string::npos) << what;
    EXPECT_EQ(what.find_first_of("\t\n"), std::string::npos) << what;
    EXPECT_EQ(what.find("  "), std::string::npos) << what;
  }
}

// A file of 4 kB of text where a database is asked for, named after `stem`.
std::string not_sqlite_file(const std::string& stem) {
  const std::string path = (fs::path(::testing::TempDir()) / fmt::format("{}-{}.txt", stem, getpid())).string();
  std::ofstream(path) << std::string(4096, 'x');
  return path;
}

TEST(HistoryDatabase, AFileThatIsNotSQLiteIsNamed) {
  const std::string path = not_sqlite_file("not-sqlite");
  try {
    HistoryStore store(path);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  fs::remove(path);
}

// Another application's SQLite database given as --db is left as it was: no tables of ours
// added, its journal mode kept (the bytes of the file unchanged).
TEST(HistoryDatabase, AnotherApplicationsDatabaseIsRefusedAndLeftAsItWas) {
  const std::string path = (fs::path(::testing::TempDir()) / fmt::format("other-app-{}.sqlite", getpid())).string();
  fs::remove(path);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "CREATE TABLE users (id INTEGER); INSERT INTO users VALUES (1)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  const auto bytes = [&] {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string before = bytes();
  try {
    HistoryStore store(path);
    FAIL() << "another application's database was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": a database of another application (tables users)"), std::string::npos) << e.what();
  }
  // A reading command opens it read-only, and says the same.
  try {
    HistoryStore reader(path, Access::read_only);
    FAIL() << "another application's database was read as a history";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("a database of another application (tables users)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(bytes(), before);
  EXPECT_FALSE(fs::exists(path + "-wal"));
  fs::remove(path);
}

// Descriptors this process holds open, as the kernel lists them.
size_t open_descriptors() {
  return static_cast<size_t>(std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator{}));
}

TEST(HistoryDatabase, ARefusedFileIsNotLeftOpen) {
  // The constructor throws after SQLite opened the file: the connection must close with it, or
  // a long-lived process (a sweep adding as it measures) leaks a descriptor per refused --db.
  const std::string path = not_sqlite_file("refused");
  const size_t before = open_descriptors();
  for (int i = 0; i < 20; ++i) EXPECT_THROW(HistoryStore store(path), std::runtime_error);
  EXPECT_EQ(open_descriptors(), before);
  fs::remove(path);
}

// A statement named in a message is cut at a word and said to be cut, on one line.
TEST(HistoryDatabase, AStatementInAMessageIsCutAtAWord) {
  const std::string head = statement_head("SELECT component, version FROM run_stack\nWHERE run_id = $1 ORDER BY component");
  EXPECT_EQ(head, "SELECT component, version FROM run_stack WHERE run_id = $1 ...");
  EXPECT_EQ(statement_head("SELECT id FROM runs"), "SELECT id FROM runs");
}

}  // namespace
}  // namespace ub::history
