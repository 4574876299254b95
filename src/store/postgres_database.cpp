// The history on a PostgreSQL server a team shares, through libpq (Debian's libpq5): one
// connection, parameters sent as text with PQsendQueryParams (the server infers their types from the
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
// unacknowledged data). A server that answers the handshake and then goes silent keeps TCP alive
// and cancels nothing: every statement is therefore also waited for here, with a deadline (the
// server's statement_timeout, asked right after connecting within kConnectTimeoutS, plus
// kConnectTimeoutS), then the connection is closed. Each limit is named in the error it causes; the address may
// set its own (postgresql://host/db?connect_timeout=30), which wins.
#include <dlfcn.h>
#include <poll.h>
#include <fmt/format.h>
#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <map>
#include <optional>
#include <regex>

#include "base/error.hpp"
#include "store/database.hpp"

namespace ub::history {

namespace {

constexpr int kConnectTimeoutS = 10;
constexpr int kStatementTimeoutS = 300;

// `s` with its %XX escapes undone, as libpq reads a parameter's key and value.
std::string percent_decoded(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The address without its password, for messages: the user:password@ part, and every query
// parameter libpq reads as the password (its key may be percent-encoded: "pass%77ord").
std::string without_password(const std::string& url) {
  static const std::regex password(R"(://([^:/@]*):[^@/]*@)");
  std::string s = std::regex_replace(url, password, "://$1:***@");
  const size_t query = s.find('?');
  if (query == std::string::npos) return s;
  std::string out = s.substr(0, query + 1);
  size_t at = query + 1;
  while (at <= s.size()) {
    const size_t end = std::min(s.find('&', at), s.size());
    const std::string param = s.substr(at, end - at);
    const size_t eq = param.find('=');
    std::string key = percent_decoded(param.substr(0, eq));
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
    out += key == "password" && eq != std::string::npos ? param.substr(0, eq + 1) + "***" : param;
    if (end < s.size()) out += '&';
    at = end + 1;
  }
  return out;
}

// libpq's messages end in a newline and may span lines, indented with tabs: ours are one line.
std::string one_line(std::string why) {
  for (char& c : why) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  std::string out;
  for (const char c : why) {
    if (c != ' ' || (!out.empty() && out.back() != ' ')) out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

void ignore_notice(void*, const char*) {}  // "relation already exists, skipping" and the like

// The libpq functions used, resolved once.
struct Libpq {
  decltype(&PQconnectdbParams) connectdb_params = nullptr;
  decltype(&PQstatus) status = nullptr;
  decltype(&PQerrorMessage) error_message = nullptr;
  decltype(&PQfinish) finish = nullptr;
  decltype(&PQsetNoticeProcessor) set_notice_processor = nullptr;
  decltype(&PQclear) clear = nullptr;
  decltype(&PQresultStatus) result_status = nullptr;
  decltype(&PQresultErrorMessage) result_error_message = nullptr;
  decltype(&PQntuples) ntuples = nullptr;
  decltype(&PQnfields) nfields = nullptr;
  decltype(&PQfname) fname = nullptr;
  decltype(&PQftable) ftable = nullptr;
  decltype(&PQgetisnull) getisnull = nullptr;
  decltype(&PQgetvalue) getvalue = nullptr;
  decltype(&PQgetlength) getlength = nullptr;
  decltype(&PQsendQuery) send_query = nullptr;
  decltype(&PQsendQueryParams) send_query_params = nullptr;
  decltype(&PQsocket) socket = nullptr;
  decltype(&PQconsumeInput) consume_input = nullptr;
  decltype(&PQisBusy) is_busy = nullptr;
  decltype(&PQgetResult) get_result = nullptr;
  decltype(&PQconninfoParse) conninfo_parse = nullptr;
  decltype(&PQconninfoFree) conninfo_free = nullptr;
  decltype(&PQfreemem) freemem = nullptr;
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
    resolve(lib, "PQclear", l.clear, l.missing);
    resolve(lib, "PQresultStatus", l.result_status, l.missing);
    resolve(lib, "PQresultErrorMessage", l.result_error_message, l.missing);
    resolve(lib, "PQntuples", l.ntuples, l.missing);
    resolve(lib, "PQnfields", l.nfields, l.missing);
    resolve(lib, "PQfname", l.fname, l.missing);
    resolve(lib, "PQftable", l.ftable, l.missing);
    resolve(lib, "PQgetisnull", l.getisnull, l.missing);
    resolve(lib, "PQgetvalue", l.getvalue, l.missing);
    resolve(lib, "PQgetlength", l.getlength, l.missing);
    resolve(lib, "PQsendQuery", l.send_query, l.missing);
    resolve(lib, "PQsendQueryParams", l.send_query_params, l.missing);
    resolve(lib, "PQsocket", l.socket, l.missing);
    resolve(lib, "PQconsumeInput", l.consume_input, l.missing);
    resolve(lib, "PQisBusy", l.is_busy, l.missing);
    resolve(lib, "PQconninfoParse", l.conninfo_parse, l.missing);
    resolve(lib, "PQconninfoFree", l.conninfo_free, l.missing);
    resolve(lib, "PQfreemem", l.freemem, l.missing);
    resolve(lib, "PQgetResult", l.get_result, l.missing);
    return l;
  }();
  return pq;
}

class PostgresDatabase final : public Database {
 public:
  explicit PostgresDatabase(const std::string& url) : name_(without_password(url)), pq_(libpq()) {
    if (!pq_.missing.empty()) throw UsageError(fmt::format("--db {}: {}", name_, pq_.missing));
    const ConnectLimit limit = connect_limit(url);
    // Our limits first: the address, expanded where it stands (expand_dbname), overrides them.
    const std::string connect = std::to_string(limit.per_host_s);
    const std::string options = fmt::format("-c statement_timeout={}", kStatementTimeoutS * 1000);
    const char* keys[] = {"connect_timeout", "options", "keepalives_idle", "keepalives_interval", "keepalives_count",
                          "tcp_user_timeout", "dbname", nullptr};
    const char* values[] = {connect.c_str(), options.c_str(), "30", "10", "3", "60000", url.c_str(), nullptr};
    conn_ = pq_.connectdb_params(keys, values, 1);
    if (conn_ == nullptr || pq_.status(conn_) != CONNECTION_OK) {
      const std::string why = one_line(conn_ ? pq_.error_message(conn_) : "out of memory");
      pq_.finish(conn_);
      conn_ = nullptr;
      throw UsageError(fmt::format("--db {}: cannot connect to PostgreSQL ({}): {}", name_, limit.text(), why));
    }
    pq_.set_notice_processor(conn_, ignore_notice, nullptr);
    // The first exchange is bounded like the connection; then statements by the server's own limit.
    deadline_s_ = kConnectTimeoutS;
    const std::vector<Row> t = query("SHOW statement_timeout", {});
    const std::optional<double> server = t.empty() || t[0].cells.empty() || !t[0].cells[0]
                                             ? std::nullopt
                                             : setting_seconds(*t[0].cells[0]);
    // A server without a limit (statement_timeout 0, its default, where the address replaced our
    // options) is still waited for within ours.
    deadline_s_ = (server && *server > 0 ? *server : kStatementTimeoutS) + kConnectTimeoutS;
  }
  ~PostgresDatabase() override { pq_.finish(conn_); }

  // libpq waits connect_timeout for each host of the address (host=a,b,c) in turn. Ours,
  // kConnectTimeoutS, is shared among them (libpq's least is 2 s a host); the address's own is
  // per host as libpq takes it, and said so.
  struct ConnectLimit {
    int per_host_s = kConnectTimeoutS;
    int hosts = 1;
    bool given = false;  // by the address
    std::string text() const {
      const std::string whose = given ? "the address's connect_timeout" : "connect_timeout";
      return hosts == 1 ? fmt::format("{} {} s", whose, per_host_s)
                        : fmt::format("{} {} s for each of its {} hosts, {} s in all", whose, per_host_s, hosts,
                                      per_host_s * hosts);
    }
  };

  // The address as libpq reads it (percent-decoded, the last of several values): its hosts, and
  // its connect_timeout, which libpq takes as no limit at all at 0 or below: refused, as nothing
  // waits for ever (whole seconds, 1 or more).
  ConnectLimit connect_limit(const std::string& url) const {
    ConnectLimit limit;
    char* error = nullptr;
    PQconninfoOption* options = pq_.conninfo_parse(url.c_str(), &error);
    if (error) pq_.freemem(error);
    if (!options) return limit;  // connecting says what is wrong with the address
    std::optional<std::string> given;
    for (const PQconninfoOption* o = options; o->keyword; ++o) {
      const std::string_view key = o->keyword;
      if (key == "connect_timeout" && o->val) given = o->val;
      if ((key == "host" || key == "hostaddr") && o->val && *o->val) {
        const std::string_view v = o->val;
        limit.hosts = std::max(limit.hosts, static_cast<int>(std::count(v.begin(), v.end(), ',')) + 1);
      }
    }
    pq_.conninfo_free(options);
    if (!given) {
      limit.per_host_s = std::max(2, kConnectTimeoutS / limit.hosts);  // rounded down: within 10 s where 2 s a host allows
      return limit;
    }
    static const std::regex seconds(R"(\s*\+?0*[1-9][0-9]{0,8}\s*)");
    if (!std::regex_match(*given, seconds)) {
      throw UsageError(fmt::format("--db {}: connect_timeout '{}' would wait on a server that never answers for ever, "
                                   "or is no number of seconds: give whole seconds, 1 or more", name_, *given));
    }
    limit.given = true;
    limit.per_host_s = std::max(2, std::stoi(*given));  // libpq's least
    return limit;
  }

  Dialect dialect() const override { return Dialect::postgresql; }
  const std::string& name() const override { return name_; }

  void execute(const std::string& sql) override {
    if (!pq_.send_query(conn_, sql.c_str())) fail_to_send(sql);
    PGresult* r = wait_for_result(sql);
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
    if (!pq_.send_query_params(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr, values.data(), nullptr,
                               nullptr, 0)) {
      fail_to_send(sql);
    }
    PGresult* r = wait_for_result(sql);
    check(r, sql);
    std::vector<Row> rows;
    const int n = pq_.ntuples(r), columns = pq_.nfields(r);
    rows.reserve(static_cast<size_t>(n));
    Columns named;
    std::vector<Oid> table_oids;
    for (int c = 0; c < columns; ++c) {
      named.names.emplace_back(pq_.fname(r, c));
      table_oids.push_back(pq_.ftable(r, c));
    }
    for (int i = 0; i < n; ++i) {
      Row row;
      row.database = &name_;
      for (int c = 0; c < columns; ++c) {
        if (pq_.getisnull(r, i, c)) row.cells.emplace_back();
        else row.cells.emplace_back(std::string(pq_.getvalue(r, i, c), static_cast<size_t>(pq_.getlength(r, i, c))));
      }
      rows.push_back(std::move(row));
    }
    pq_.clear(r);
    if (n > 0) {
      for (const Oid oid : table_oids) named.tables.push_back(table_named(oid));
      const auto shared = std::make_shared<const Columns>(std::move(named));
      for (Row& row : rows) row.columns = shared;
    }
    return rows;
  }

  void begin() override { execute("BEGIN"); }
  void commit() override { execute("COMMIT"); }
  void rollback() noexcept override {
    try {
      execute("ROLLBACK");
    } catch (const std::exception&) {
      // the transaction ends with the connection anyway
    }
  }

 private:
  // "300s", "5min", "250ms", "0" as SHOW prints a time setting, in seconds.
  static std::optional<double> setting_seconds(const std::string& v) {
    static const std::regex re(R"(^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|min|h|d)?\s*$)");
    std::smatch m;
    if (!std::regex_match(v, m, re)) return std::nullopt;
    const double n = std::stod(m[1].str());
    const std::string u = m[2].str();
    const double scale = u == "s" ? 1 : u == "min" ? 60 : u == "h" ? 3600 : u == "d" ? 86400 : 1e-3;  // bare: ms
    return n * scale;
  }

  [[noreturn]] void fail_to_send(const std::string& sql) {
    throw WorkError(fmt::format("history database {}: {} ({})", name_, one_line(pq_.error_message(conn_)),
                                statement_head(sql)));
  }

  // The statement's last result, waiting for the server at most deadline_s_ (0: as long as it
  // takes); past it the error says how long was waited (the connection is closed with it).
  PGresult* wait_for_result(const std::string& sql) {
    using clock = std::chrono::steady_clock;
    const auto until = clock::now() + std::chrono::duration<double>(deadline_s_);
    while (pq_.is_busy(conn_)) {
      int wait_ms = -1;
      if (deadline_s_ > 0) {
        const double left = std::chrono::duration<double>(until - clock::now()).count();
        if (left <= 0) {
          // No cancel request: libpq sends it on a connection of its own and waits, without a
          // limit, for the silent server to close it. The connection is closed instead; the
          // server's statement_timeout ends what it was doing.
          throw WorkError(fmt::format("history database {}: no answer from the server within {:.0f} s (its "
                                      "statement_timeout plus {} s, or {} s right after connecting) ({})",
                                      name_, deadline_s_, kConnectTimeoutS, kConnectTimeoutS, statement_head(sql)));
        }
        wait_ms = static_cast<int>(std::min(left * 1000 + 1, 1e9));
      }
      pollfd p{pq_.socket(conn_), POLLIN, 0};
      const int ready = ::poll(&p, 1, wait_ms);
      if (ready < 0 && errno != EINTR) fail_to_send(sql);
      if (ready > 0 && !pq_.consume_input(conn_)) fail_to_send(sql);
    }
    PGresult* last = nullptr;
    while (PGresult* r = pq_.get_result(conn_)) {
      if (last) pq_.clear(last);
      last = r;
    }
    return last;
  }

  // The name of the table whose oid a result column reads ("" for an expression), asked of the
  // server once per table and connection.
  std::string table_named(Oid oid) {
    if (oid == InvalidOid) return "";
    if (const auto known = table_names_.find(oid); known != table_names_.end()) return known->second;
    static const std::string sql = "SELECT relname FROM pg_class WHERE oid = $1";
    const std::string text = std::to_string(oid);
    const char* values[] = {text.c_str()};
    if (!pq_.send_query_params(conn_, sql.c_str(), 1, nullptr, values, nullptr, nullptr, 0)) fail_to_send(sql);
    PGresult* r = wait_for_result(sql);
    check(r, sql);
    std::string name = pq_.ntuples(r) == 1 ? std::string(pq_.getvalue(r, 0, 0)) : std::string();
    pq_.clear(r);
    return table_names_[oid] = name;
  }

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
  double deadline_s_ = kConnectTimeoutS;  // what a statement is waited for (0: no limit of ours)
  std::map<Oid, std::string> table_names_;
};

}  // namespace

std::unique_ptr<Database> open_postgres(const std::string& url) { return std::make_unique<PostgresDatabase>(url); }

}  // namespace ub::history
