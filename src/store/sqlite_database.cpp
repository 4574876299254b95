// The history in one SQLite file, through SQLite's own C library (Debian's libsqlite3). WAL
// journal: readers never wait for the writer; writers queue on the file's lock for up to a
// minute (several processes adding at once lose nothing), and a process killed mid-transaction
// leaves the file as it was before it (SQLite rolls the journal back on the next open).
// Prepared statements are kept per SQL text: a file of 100k records inserts through one.
#include <fmt/format.h>
#include <sqlite3.h>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

#include "base/error.hpp"
#include "base/text.hpp"
#include "store/database.hpp"

namespace ub::history {

namespace {

constexpr int kBusyTimeoutMs = 60'000;

// The connection and its prepared statements close themselves: a constructor that throws after
// opening (a file that is not an SQLite database) leaves nothing open, and statements are
// finalized before the connection they belong to (members are destroyed in reverse order).
struct CloseConnection {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct FinalizeStatement {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};

// A permission the database needs and the user lacks, said as that (SQLite's own words for it
// are "unable to open database file" or "attempt to write a readonly database", read as a bad
// database): UsageError, or nothing when the permissions allow `access`.
void check_permissions(const std::string& path, Access access) {
  const std::filesystem::path p(path);
  const std::filesystem::path folder = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  const bool exists = std::filesystem::exists(p, ec);
  if (exists && !std::filesystem::is_regular_file(p, ec)) {
    throw UsageError(fmt::format("--db {}: not a file (a folder, a pipe or a device): the history database is an SQLite "
                                 "file; give its path", path));
  }
  if (exists && ::access(path.c_str(), R_OK) != 0) {
    throw UsageError(fmt::format("--db {}: permission denied: this user may not read the history database ({}); ask "
                                 "its owner for read access", path, std::strerror(errno)));
  }
  if (access == Access::read_only) return;
  if (exists && ::access(path.c_str(), W_OK) != 0) {
    throw UsageError(fmt::format("--db {}: permission denied: this user may read the history database but not write "
                                 "it, which adding runs does; the reading commands (history list, trend, fleet) open "
                                 "it read-only", path));
  }
  // The journal of a WAL database another user made (a reader of an older upgradebench, a tool
  // of its own) and this one may not write: SQLite would say "readonly database".
  for (const char* journal : {"-wal", "-shm"}) {
    const std::string side = path + journal;
    struct stat st{};
    if (::stat(side.c_str(), &st) != 0 || ::access(side.c_str(), W_OK) == 0) continue;
    const passwd* owner = ::getpwuid(st.st_uid);
    const std::string who = owner ? fmt::format("user {}", owner->pw_name) : fmt::format("uid {}", st.st_uid);
    throw UsageError(fmt::format("--db {}: permission denied: its journal {} belongs to {} and this user may not write "
                                 "it; when no program has the database open, {} (or root) may remove it: the runs are "
                                 "in the database itself once every writer has closed it", path, side, who, who));
  }
  // SQLite writes its journal (-wal, -shm) beside the file, and a new database is created there.
  if (std::filesystem::exists(folder, ec) && ::access(folder.c_str(), W_OK) != 0) {
    throw UsageError(fmt::format("--db {}: permission denied: this user may not write the folder {} that holds the "
                                 "history database and its journal; choose a --db in a folder you may write",
                                 path, folder.string()));
  }
}

// Whether this user may write `path`'s folder (where SQLite keeps a WAL database's -shm file).
bool folder_writable(const std::string& path) {
  const std::filesystem::path p(path);
  return ::access((p.has_parent_path() ? p.parent_path() : std::filesystem::path(".")).c_str(), W_OK) == 0;
}

// `path` as an SQLite URI that opens it immutable: read where its folder cannot take the WAL
// index, on the promise that nobody writes it meanwhile (whoever could is not this user).
std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  for (const unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/-._~", c)) uri += static_cast<char>(c);
    else uri += fmt::format("%{:02X}", c);
  }
  return uri + "?immutable=1";
}

class SqliteDatabase final : public Database {
 public:
  SqliteDatabase(const std::string& path, Access access) : name_(path) {
    check_permissions(path, access);
    const std::filesystem::path p(path);
    if (p.has_parent_path() && access == Access::read_write) {
      std::error_code ec;
      std::filesystem::create_directories(p.parent_path(), ec);
    }
    sqlite3* opened = nullptr;
    // Written, never through a symbolic link (one planted in a shared folder would have the
    // history written wherever it points); read, a link is followed like any path.
    const int flags = access == Access::read_only ? SQLITE_OPEN_READONLY
                                                  : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW;
    // A database this user may only read (the file, or the folder that would take the WAL index):
    // read immutable, so that no -wal or -shm of this user's is left beside another's database
    // (its owner could not write through them), when no write-ahead log holds runs not yet in the
    // file (with one, SQLite reads it through the -shm beside it, or says it cannot).
    std::error_code ec;
    const auto refuse_link = [&] {
      throw UsageError(fmt::format("--db {}: a symbolic link: the history is written to the file named, never through "
                                   "a link; give the file it points to", path));
    };
    // SQLite's own refusal (SQLITE_OPEN_NOFOLLOW) lets a link to nothing yet create its target.
    if (access != Access::read_only && std::filesystem::is_symlink(path, ec)) refuse_link();
    // SQLite opens its journal beside the file and will not follow a link there (it says "unable
    // to open database file", which reads as a bad database): said as what it is.
    for (const char* journal : {"-wal", "-shm", "-journal"}) {
      if (std::filesystem::is_symlink(path + journal, ec)) {
        throw UsageError(fmt::format("--db {}: its journal {}{} is a symbolic link: SQLite writes the journal beside the "
                                     "database, never through a link; remove the link (the database itself is "
                                     "untouched)", path, path, journal));
      }
    }
    const bool writable = folder_writable(path) && ::access(path.c_str(), W_OK) == 0;
    const bool immutable = access == Access::read_only && !writable && !std::filesystem::exists(path + "-wal", ec);
    // A database this user may write is read through a connection that could write it, kept from
    // doing so (query_only): SQLite removes the -wal and -shm a read-only connection leaves behind
    // only when the last connection to close may write the database.
    const bool query_only = access == Access::read_only && writable;
    const int open_flags = query_only ? SQLITE_OPEN_READWRITE : flags;
    const int rc = sqlite3_open_v2(immutable ? immutable_uri(path).c_str() : path.c_str(), &opened,
                                   open_flags | SQLITE_OPEN_FULLMUTEX | (immutable ? SQLITE_OPEN_URI : 0), nullptr);
    db_.reset(opened);  // SQLite hands out a handle to close even when opening fails
    if (rc == SQLITE_CANTOPEN_SYMLINK) refuse_link();  // a link among the folders of the path
    if (rc != SQLITE_OK) {
      const char* why = db_ ? sqlite3_errmsg(db_.get()) : "out of memory";
      throw UsageError(fmt::format("--db {}: cannot open the SQLite database: {}", path, why));
    }
    sqlite3_busy_timeout(db_.get(), kBusyTimeoutMs);
    if (query_only) execute("PRAGMA query_only=1");
    try {
      // Read-only, the journal mode stays what the writer set (WAL); reading the schema tells
      // whether the file is an SQLite database at all.
      execute("SELECT count(*) FROM sqlite_master");
    } catch (const WorkError&) {
      // An SQLite file cut short or overwritten in part is a damaged database (exit 1); a file of
      // another kind is the wrong file given (exit 2).
      if (sqlite3_errcode(db_.get()) == SQLITE_CORRUPT) {
        throw WorkError(fmt::format("--db {}: a damaged SQLite database ({}): restore it from a copy, or start a new "
                                    "one at another path", path, sqlite3_errmsg(db_.get())));
      }
      throw UsageError(fmt::format("--db {}: not an SQLite database ({}): give a history database, or a path where "
                                   "none is yet to start one", path, sqlite3_errmsg(db_.get())));
    }
    // Another application's database is left as it is: no tables of ours added, no journal mode
    // changed, and a reading command says what it is too. A history database has the schema's
    // version table; a new one has none.
    std::vector<std::string> tables;
    for (const Row& r : query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name", {})) {
      tables.push_back(r.text(0));
    }
    if (!tables.empty() && std::find(tables.begin(), tables.end(), "schema_version") == tables.end()) {
      throw UsageError(fmt::format("--db {}: a database of another application (tables {}{}): give a history database "
                                   "or a new file", printable(path), printable(tables.front()),
                                   tables.size() > 1 ? fmt::format(" and {} more", tables.size() - 1) : ""));
    }
    if (access != Access::read_only) execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL");
  }

  Dialect dialect() const override { return Dialect::sqlite; }
  const std::string& name() const override { return name_; }

  void execute(const std::string& sql) override {
    char* error = nullptr;
    if (sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      const std::string why = error ? error : sqlite3_errmsg(db_.get());
      sqlite3_free(error);
      throw WorkError(fmt::format("history database {}: {} ({})", name_, why, statement_head(sql)));
    }
  }

  std::vector<Row> query(const std::string& sql, const std::vector<Value>& params) override {
    sqlite3_stmt* stmt = prepared(sql);
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    for (size_t i = 0; i < params.size(); ++i) {
      const std::string name = fmt::format("${}", i + 1);
      const int index = sqlite3_bind_parameter_index(stmt, name.c_str());
      if (index == 0) throw WorkError(fmt::format("history database: {} is not in the statement ({})", name, statement_head(sql)));
      int rc = SQLITE_OK;
      if (const auto* v = std::get_if<int64_t>(&params[i])) rc = sqlite3_bind_int64(stmt, index, *v);
      else if (const auto* d = std::get_if<double>(&params[i])) rc = sqlite3_bind_double(stmt, index, *d);
      else if (const auto* s = std::get_if<std::string>(&params[i])) rc = sqlite3_bind_text(stmt, index, s->data(), static_cast<int>(s->size()), SQLITE_STATIC);  // `params` outlives the steps
      else rc = sqlite3_bind_null(stmt, index);
      if (rc != SQLITE_OK) fail(sql);
    }
    std::vector<Row> rows;
    std::shared_ptr<const Columns> names;
    for (;;) {
      const int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        sqlite3_reset(stmt);
        fail(sql);
      }
      const int columns = sqlite3_column_count(stmt);
      if (!names) {
        Columns n;
        for (int c = 0; c < columns; ++c) {
          n.names.emplace_back(sqlite3_column_name(stmt, c));
          const char* table = sqlite3_column_table_name(stmt, c);  // NULL for an expression
          n.tables.emplace_back(table ? table : "");
        }
        names = std::make_shared<const Columns>(std::move(n));
      }
      Row row;
      row.database = &name_;
      row.columns = names;
      for (int c = 0; c < columns; ++c) {
        switch (sqlite3_column_type(stmt, c)) {
          case SQLITE_NULL: row.cells.emplace_back(); break;
          case SQLITE_FLOAT: row.cells.emplace_back(number_text(sqlite3_column_double(stmt, c))); break;
          default: {
            const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
            row.cells.emplace_back(std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt, c))));
          }
        }
      }
      rows.push_back(std::move(row));
    }
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);  // no binding outlives `params`
    return rows;
  }

  void begin() override { execute("BEGIN IMMEDIATE"); }
  void commit() override { execute("COMMIT"); }
  void rollback() noexcept override { sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr); }

 private:
  sqlite3_stmt* prepared(const std::string& sql) {
    auto it = statements_.find(sql);
    if (it != statements_.end()) return it->second.get();
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v2(db_.get(), sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
    std::unique_ptr<sqlite3_stmt, FinalizeStatement> held(stmt);
    if (rc != SQLITE_OK) fail(sql);
    return statements_.emplace(sql, std::move(held)).first->second.get();
  }

  [[noreturn]] void fail(const std::string& sql) {
    throw WorkError(fmt::format("history database {}: {} ({})", name_, sqlite3_errmsg(db_.get()), statement_head(sql)));
  }

  std::string name_;
  std::unique_ptr<sqlite3, CloseConnection> db_;
  std::map<std::string, std::unique_ptr<sqlite3_stmt, FinalizeStatement>> statements_;
};

}  // namespace

std::unique_ptr<Database> open_sqlite(const std::string& path, Access access) {
  return std::make_unique<SqliteDatabase>(path, access);
}

}  // namespace ub::history
