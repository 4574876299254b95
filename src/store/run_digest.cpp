// A stored run's rows as one digest; see run_digest.hpp.
#include "store/run_digest.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/text.hpp"

namespace ub::history {

namespace {

// The rows of each query, in order, every cell as the database gives it (null told from "").
void append_rows(Database& db, const std::string& sql, int64_t run, std::string& text) {
  for (const Row& r : db.query(sql, {run})) {
    for (const std::optional<std::string>& cell : r.cells) {
      text += cell ? *cell : std::string("\x1e");
      text += '\x1f';
    }
    text += '\n';
  }
  text += '\x1d';
}

}  // namespace

std::string run_rows_digest(Database& db, int64_t run) {
  std::string text;
  append_rows(db, "SELECT id, run_key, kind, command, format, date, host, model, provenance, source, added, workload, "
                  "world_size, line_count FROM runs WHERE id = $1", run, text);
  append_rows(db, "SELECT line_no, text FROM run_lines WHERE run_id = $1 ORDER BY line_no", run, text);
  append_rows(db, "SELECT gpu_index, name, uuid FROM run_gpus WHERE run_id = $1 ORDER BY gpu_index", run, text);
  append_rows(db, "SELECT component, version FROM run_stack WHERE run_id = $1 ORDER BY component", run, text);
  append_rows(db, "SELECT gpu_index, metric, x, n, median, low, high, sm_clock_mhz, power_w, temperature_c, throttle "
                  "FROM run_metrics WHERE run_id = $1 ORDER BY gpu_index, metric, x", run, text);
  return fnv1a_hex(text);
}

void store_run_digest(Database& db, int64_t run) {
  db.query("UPDATE runs SET digest = $1 WHERE id = $2", {run_rows_digest(db, run), run});
}

void check_run_digest(Database& db, int64_t run) {
  const std::vector<Row> stored = db.query("SELECT digest FROM runs WHERE id = $1", {run});
  if (stored.empty()) return;  // no such run: the caller says so
  if (stored.front().at(0) && *stored.front().at(0) == run_rows_digest(db, run)) return;
  throw WorkError(fmt::format("history database {}: run {}'s rows are not as `history add` stored them (a figure, a GPU, "
                              "a version or a label changed since: the database was edited or damaged): restore it from "
                              "a copy, or add the run's file to a new database", db.name(), run));
}

}  // namespace ub::history
