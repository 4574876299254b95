// The history on a PostgreSQL server a team shares, through libpq (Debian's libpq5): one
// connection, parameters sent as text with PQexecParams (the server infers their types from the
// statement), rows read back as text. Transactions are the server's: a client that dies
// mid-transaction leaves nothing behind, and concurrent writers of one run meet at the runs
// table's unique key.
#include <fmt/format.h>
#include <libpq-fe.h>

#include <regex>

#include "core/error.hpp"
#include "history/database.hpp"

namespace ub::history {

namespace {


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

class PostgresDatabase final : public Database {
 public:
  explicit PostgresDatabase(const std::string& url) : name_(without_password(url)) {
    conn_ = PQconnectdb(url.c_str());
    if (conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK) {
      const std::string why = one_line(conn_ ? PQerrorMessage(conn_) : "out of memory");
      PQfinish(conn_);
      conn_ = nullptr;
      throw UsageError(fmt::format("--db {}: cannot connect to PostgreSQL: {}", name_, why));
    }
    PQsetNoticeProcessor(conn_, ignore_notice, nullptr);
  }
  ~PostgresDatabase() override { PQfinish(conn_); }

  Dialect dialect() const override { return Dialect::postgresql; }
  const std::string& name() const override { return name_; }

  void execute(const std::string& sql) override {
    PGresult* r = PQexec(conn_, sql.c_str());
    check(r, sql);
    PQclear(r);
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
    PGresult* r = PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr, values.data(), nullptr,
                               nullptr, 0);
    check(r, sql);
    std::vector<Row> rows;
    const int n = PQntuples(r), columns = PQnfields(r);
    rows.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      Row row;
      for (int c = 0; c < columns; ++c) {
        if (PQgetisnull(r, i, c)) row.cells.emplace_back();
        else row.cells.emplace_back(std::string(PQgetvalue(r, i, c), static_cast<size_t>(PQgetlength(r, i, c))));
      }
      rows.push_back(std::move(row));
    }
    PQclear(r);
    return rows;
  }

  void begin() override { execute("BEGIN"); }
  void commit() override { execute("COMMIT"); }
  void rollback() noexcept override {
    PGresult* r = PQexec(conn_, "ROLLBACK");
    PQclear(r);
  }

 private:
  void check(PGresult* r, const std::string& sql) {
    const ExecStatusType s = PQresultStatus(r);
    if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK) return;
    const std::string why = one_line(PQresultErrorMessage(r));
    PQclear(r);
    throw WorkError(fmt::format("history database {}: {} ({})", name_, why, statement_head(sql)));
  }

  std::string name_;
  PGconn* conn_ = nullptr;
};

}  // namespace

std::unique_ptr<Database> open_postgres(const std::string& url) { return std::make_unique<PostgresDatabase>(url); }

}  // namespace ub::history
