// The history on a PostgreSQL server a team shares, through libpq (Debian's libpq5): one
// connection, parameters sent as text with PQexecParams (the server infers their types from the
// statement), rows read back as text. Transactions are the server's: a client that dies
// mid-transaction leaves nothing behind, and concurrent writers of one run meet at the runs
// table's unique key.
//
// libpq is opened at run time (dlopen, its declarations from libpq-fe.h): a GPU node without it
// still measures, and only a postgresql:// --db asks for it.
//
// Nothing waits for ever on the server: connecting gives up after kConnectTimeoutS (a port that
// accepts and never answers), a statement after kStatementTimeoutS (the server cancels it), and
// a connection whose server went silent mid-session is dropped by TCP (keepalives, a limit on
// unacknowledged data). Each limit is named in the error it causes; the address may set its own
// (postgresql://host/db?connect_timeout=30), which wins.
#include <dlfcn.h>
#include <fmt/format.h>
#include <libpq-fe.h>

#include <regex>

#include "base/error.hpp"
#include "store/database.hpp"

namespace ub::history {

namespace {

constexpr int kConnectTimeoutS = 10;
constexpr int kStatementTimeoutS = 300;

// The address without its password, for messages.
std::string without_password(const std::string& url) {
  static const std::regex password(R"(://([^:/@]*):[^@/]*@)");
  std::string s = std::regex_replace(url, password, "://$1:***@");
  static const std::regex query_password(R"(([?&]password=)[^&]*)");
  return std::regex_replace(s, query_password, "$1***");
}

// libpq's messages end in a newline and may span lines: ours are one line.
std::string one_line(std::string why) {
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  for (char& c : why) {
    if (c == '\n') c = ' ';
  }
  return why;
}

void ignore_notice(void*, const char*) {}  // "relation already exists, skipping" and the like

// The libpq functions used, resolved once.
struct Libpq {
  decltype(&PQconnectdbParams) connectdb_params = nullptr;
  decltype(&PQstatus) status = nullptr;
  decltype(&PQerrorMessage) error_message = nullptr;
  decltype(&PQfinish) finish = nullptr;
  decltype(&PQsetNoticeProcessor) set_notice_processor = nullptr;
  decltype(&PQexec) exec = nullptr;
  decltype(&PQexecParams) exec_params = nullptr;
  decltype(&PQclear) clear = nullptr;
  decltype(&PQresultStatus) result_status = nullptr;
  decltype(&PQresultErrorMessage) result_error_message = nullptr;
  decltype(&PQntuples) ntuples = nullptr;
  decltype(&PQnfields) nfields = nullptr;
  decltype(&PQgetisnull) getisnull = nullptr;
  decltype(&PQgetvalue) getvalue = nullptr;
  decltype(&PQgetlength) getlength = nullptr;
  std::string missing;  // why it could not be loaded
};

template <class F>
void resolve(void* lib, const char* name, F& f, std::string& missing) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f && missing.empty()) missing = fmt::format("libpq.so.5 lacks {}", name);
}

const Libpq& libpq() {
  static const Libpq pq = [] {
    Libpq l;
    void* lib = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      l.missing = "PostgreSQL's client library libpq.so.5 is not installed (Debian: libpq5)";
      return l;
    }
    resolve(lib, "PQconnectdbParams", l.connectdb_params, l.missing);
    resolve(lib, "PQstatus", l.status, l.missing);
    resolve(lib, "PQerrorMessage", l.error_message, l.missing);
    resolve(lib, "PQfinish", l.finish, l.missing);
    resolve(lib, "PQsetNoticeProcessor", l.set_notice_processor, l.missing);
    resolve(lib, "PQexec", l.exec, l.missing);
    resolve(lib, "PQexecParams", l.exec_params, l.missing);
    resolve(lib, "PQclear", l.clear, l.missing);
    resolve(lib, "PQresultStatus", l.result_status, l.missing);
    resolve(lib, "PQresultErrorMessage", l.result_error_message, l.missing);
    resolve(lib, "PQntuples", l.ntuples, l.missing);
    resolve(lib, "PQnfields", l.nfields, l.missing);
    resolve(lib, "PQgetisnull", l.getisnull, l.missing);
    resolve(lib, "PQgetvalue", l.getvalue, l.missing);
    resolve(lib, "PQgetlength", l.getlength, l.missing);
    return l;
  }();
  return pq;
}

class PostgresDatabase final : public Database {
 public:
  explicit PostgresDatabase(const std::string& url) : name_(without_password(url)), pq_(libpq()) {
    if (!pq_.missing.empty()) throw UsageError(fmt::format("--db {}: {}", name_, pq_.missing));
    // Our limits first: the address, expanded where it stands (expand_dbname), overrides them.
    const std::string connect = std::to_string(kConnectTimeoutS);
    const std::string options = fmt::format("-c statement_timeout={}", kStatementTimeoutS * 1000);
    const char* keys[] = {"connect_timeout", "options", "keepalives_idle", "keepalives_interval", "keepalives_count",
                          "tcp_user_timeout", "dbname", nullptr};
    const char* values[] = {connect.c_str(), options.c_str(), "30", "10", "3", "60000", url.c_str(), nullptr};
    conn_ = pq_.connectdb_params(keys, values, 1);
    if (conn_ == nullptr || pq_.status(conn_) != CONNECTION_OK) {
      const std::string why = one_line(conn_ ? pq_.error_message(conn_) : "out of memory");
      pq_.finish(conn_);
      conn_ = nullptr;
      throw UsageError(fmt::format("--db {}: cannot connect to PostgreSQL (connect_timeout {} s unless the address sets "
                                   "another): {}", name_, kConnectTimeoutS, why));
    }
    pq_.set_notice_processor(conn_, ignore_notice, nullptr);
  }
  ~PostgresDatabase() override { pq_.finish(conn_); }

  Dialect dialect() const override { return Dialect::postgresql; }
  const std::string& name() const override { return name_; }

  void execute(const std::string& sql) override {
    PGresult* r = pq_.exec(conn_, sql.c_str());
    check(r, sql);
    pq_.clear(r);
  }

  std::vector<Row> query(const std::string& sql, const std::vector<Value>& params) override {
    std::vector<std::string> text(params.size());
    std::vector<const char*> values(params.size(), nullptr);
    for (size_t i = 0; i < params.size(); ++i) {
      if (const auto* v = std::get_if<int64_t>(&params[i])) text[i] = std::to_string(*v);
      else if (const auto* d = std::get_if<double>(&params[i])) text[i] = number_text(*d);
      else if (const auto* s = std::get_if<std::string>(&params[i])) text[i] = *s;
      else continue;  // NULL
      values[i] = text[i].c_str();
    }
    PGresult* r = pq_.exec_params(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr, values.data(), nullptr,
                               nullptr, 0);
    check(r, sql);
    std::vector<Row> rows;
    const int n = pq_.ntuples(r), columns = pq_.nfields(r);
    rows.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      Row row;
      for (int c = 0; c < columns; ++c) {
        if (pq_.getisnull(r, i, c)) row.cells.emplace_back();
        else row.cells.emplace_back(std::string(pq_.getvalue(r, i, c), static_cast<size_t>(pq_.getlength(r, i, c))));
      }
      rows.push_back(std::move(row));
    }
    pq_.clear(r);
    return rows;
  }

  void begin() override { execute("BEGIN"); }
  void commit() override { execute("COMMIT"); }
  void rollback() noexcept override {
    PGresult* r = pq_.exec(conn_, "ROLLBACK");
    pq_.clear(r);
  }

 private:
  void check(PGresult* r, const std::string& sql) {
    const ExecStatusType s = pq_.result_status(r);
    if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK) return;
    std::string why = one_line(pq_.result_error_message(r));
    pq_.clear(r);
    if (why.find("statement timeout") != std::string::npos) {
      why += fmt::format(" (statement_timeout {} s: set another in the address, ?options=-c%20statement_timeout%3D600000)",
                         kStatementTimeoutS);
    }
    if (why.empty()) why = "no answer from the server";
    throw WorkError(fmt::format("history database {}: {} ({})", name_, why, statement_head(sql)));
  }

  std::string name_;
  const Libpq& pq_;
  PGconn* conn_ = nullptr;
};

}  // namespace

std::unique_ptr<Database> open_postgres(const std::string& url) { return std::make_unique<PostgresDatabase>(url); }

}  // namespace ub::history
