// The one interface the history speaks to its database through, whichever it is: SQLite (one
// file, the default) or PostgreSQL (a server a team shares). SQL is written once, in the subset
// both understand: parameters are $1, $2, ..., upserts are INSERT ... ON CONFLICT, ids come back
// through RETURNING; what differs (the id column, taking the write lock) is asked of dialect().
// Values travel as text both ways, numbers in their shortest round-trip form.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ub::history {

using Value = std::variant<std::monostate, int64_t, double, std::string>;

// A statement's result columns: each one's name, and the table it reads where it is a table's
// column as it stands ("" for an expression such as COUNT(*)).
struct Columns {
  std::vector<std::string> names;
  std::vector<std::string> tables;
};

struct Row {
  std::vector<std::optional<std::string>> cells;
  // For the messages of a cell that is no number: the database's name, and the statement's
  // columns (a row of a run, one with an `id` or `run_id` column, is named by it too).
  const std::string* database = nullptr;
  std::shared_ptr<const Columns> columns;

  const std::optional<std::string>& at(size_t i) const { return cells.at(i); }
  std::string text(size_t i) const { return cells.at(i).value_or(""); }
  int64_t integer(size_t i) const;
  double real(size_t i) const;
  std::optional<double> optional_real(size_t i) const;
};

enum class Dialect { sqlite, postgresql };

class Database {
 public:
  virtual ~Database() = default;
  virtual Dialect dialect() const = 0;
  // The file, or the server's address without its password, for messages.
  virtual const std::string& name() const = 0;
  // Statements without parameters or rows (DDL, several separated by ';').
  virtual void execute(const std::string& sql) = 0;
  // One statement; its rows (none for INSERT without RETURNING). Throws WorkError naming the
  // database and the statement's first words on an error.
  virtual std::vector<Row> query(const std::string& sql, const std::vector<Value>& params = {}) = 0;
  // A write transaction: SQLite takes the write lock at once (BEGIN IMMEDIATE, waiting up to its
  // busy timeout for another writer), so two writers never deadlock upgrading a read lock.
  virtual void begin() = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;
};

// Commits when told to, rolls back when left otherwise (an exception, a return).
class Transaction {
 public:
  explicit Transaction(Database& db) : db_(db) { db_.begin(); }
  ~Transaction() {
    if (!done_) db_.rollback();
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    db_.commit();
    done_ = true;
  }

 private:
  Database& db_;
  bool done_ = false;
};

// "postgresql://..." or "postgres://..." (libpq's URI: host, port, user, dbname, password):
// PostgreSQL; anything else is an SQLite file (created with its folder when missing).
// Throws UsageError when it cannot be opened or reached.
// `read_only`: for the commands that only read (history list, trend, fleet; compare run:N): an
// SQLite file the user may read but not write opens, and nothing is created or written.
enum class Access { read_write, read_only };
// Whether `spec` is a PostgreSQL address ("postgresql://..." or "postgres://...").
bool is_postgres(const std::string& spec);
std::unique_ptr<Database> open_database(const std::string& spec, Access access = Access::read_write);
std::unique_ptr<Database> open_sqlite(const std::string& path, Access access = Access::read_write);
std::unique_ptr<Database> open_postgres(const std::string& url);

// For commands that only read: a database file that does not exist is a UsageError naming it
// (opening would create an empty one), as --db when `given` there, else as the default one. A
// server address passes.
void require_existing(const std::string& spec, bool given);

// Where `history` keeps its database when --db is not given: $UPGRADEBENCH_DB, else
// $XDG_DATA_HOME/upgradebench/history.sqlite (an absolute XDG_DATA_HOME only, as the XDG
// specification says), else ~/.local/share/upgradebench/history.sqlite.
std::string default_database();

// The start of a statement, on one line, for messages.
std::string statement_head(const std::string& sql);

// A number as text that reads back to the same double.
std::string number_text(double v);

}  // namespace ub::history
