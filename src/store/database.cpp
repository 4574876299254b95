// Choosing the database from what the user typed, and reading the text values back; see
// database.hpp.
#include "store/database.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>

#include "base/error.hpp"
#include "base/text.hpp"

namespace ub::history {

namespace {

// "column run_metrics.median of run 3", or as much of it as the row tells.
std::string cell_name(const Row& row, size_t i) {
  const Columns* columns = row.columns.get();
  if (!columns || i >= columns->names.size()) return fmt::format("column {}", i);
  const std::string table = i < columns->tables.size() ? columns->tables[i] : std::string();
  std::string s = "column " + printable(table.empty() ? columns->names[i] : table + "." + columns->names[i]);
  const std::vector<std::string>& names = columns->names;
  for (const char* id : {"run_id", "id"}) {
    const auto at = std::find(names.begin(), names.end(), id);
    if (at == names.end()) continue;
    const auto& cell = row.cells.at(static_cast<size_t>(at - names.begin()));
    int64_t run = 0;
    if (cell && std::from_chars(cell->data(), cell->data() + cell->size(), run).ptr == cell->data() + cell->size()) {
      return fmt::format("{} of run {}", s, run);
    }
  }
  return s;
}

// A cell upgradebench wrote as a number holds text or NULL only in a database edited or damaged.
template <class T>
T parse_number(const Row& row, size_t i) {
  const std::optional<std::string>& cell = row.cells.at(i);
  const auto db = [&] { return row.database ? " " + *row.database : std::string(); };  // for a message only
  if (!cell) {
    throw WorkError(fmt::format("history database{}: {} is NULL where a number was expected (the database was "
                                "edited or damaged)", db(), cell_name(row, i)));
  }
  T v{};
  const char* end = cell->data() + cell->size();
  auto [p, ec] = std::from_chars(cell->data(), end, v);
  if (ec != std::errc() || p != end) {
    throw WorkError(fmt::format("history database{}: {} holds '{}', not a number (the database was edited or "
                                "damaged)", db(), cell_name(row, i), printable(*cell)));
  }
  return v;
}

// Another scheme's address (mysql://, sqlite:///path) would be a relative path of folders named
// after it, created under the working folder.
// libpq's other form of an address, "host=... dbname=...": never a file's name (it would be
// created, and its password printed). Said without the string itself, which may hold one.
void refuse_keyword_address(const std::string& spec) {
  // Any of libpq's keywords first (identifier=), with a second pair or a password anywhere.
  static const std::regex pairs(R"(^\s*[A-Za-z_]+\s*=\S*(\s+[A-Za-z_]+\s*=|.*\bpassword\s*=))");
  static const std::regex first(R"(^\s*(host|hostaddr|port|dbname|user|password|passfile|service)\s*=)");
  if (!std::regex_search(spec, pairs) && !std::regex_search(spec, first)) return;
  throw UsageError("--db: a libpq keyword=value connection string (host=... dbname=...): give it as a postgresql:// "
                   "address (postgresql://USER@HOST:PORT/DBNAME), or ./NAME for an SQLite file of that name");
}

// SQLite's own names that are no file: ":memory:" (a database that dies with the process: every
// run added to it is lost, while `history add` says it was added) and URIs ("file:x?mode=memory",
// or "file:x", written as x where a reader given the same name looks for a file "file:x").
void refuse_sqlite_names(const std::string& spec) {
  if (spec == ":memory:") {
    throw UsageError("--db :memory:: SQLite's in-memory database keeps nothing past the command; give a file's path");
  }
  if (spec.rfind("file:", 0) == 0) {
    throw UsageError(fmt::format("--db {}: an SQLite URI, which names another file than the path it reads as; give the "
                                 "file's path (./{} for a file of that very name)", printable(spec), printable(spec)));
  }
}

void refuse_other_scheme(const std::string& spec) {
  refuse_keyword_address(spec);
  refuse_sqlite_names(spec);
  const size_t colon = spec.find("://");
  if (colon == std::string::npos || colon == 0) return;
  const auto scheme_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.'; };
  if (!std::all_of(spec.begin(), spec.begin() + static_cast<std::ptrdiff_t>(colon), scheme_char)) return;
  throw UsageError(fmt::format("--db {}: an address of a database upgradebench does not speak; give an SQLite file's "
                               "path or a postgresql:// address", printable(spec)));
}

}  // namespace

int64_t Row::integer(size_t i) const { return parse_number<int64_t>(*this, i); }
double Row::real(size_t i) const { return parse_number<double>(*this, i); }
std::optional<double> Row::optional_real(size_t i) const {
  if (!cells.at(i)) return std::nullopt;
  return real(i);
}

std::string number_text(double v) { return fmt::format("{}", v); }

std::string statement_head(const std::string& sql) {
  constexpr size_t kMost = 60;
  std::string s = sql.substr(0, kMost);
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  // Cut at a word, and said to be cut: "... run_id = $1 O" reads as a statement that ends there.
  if (sql.size() > kMost) {
    if (const size_t space = s.rfind(' '); space != std::string::npos && space > kMost / 2) s.resize(space);
    s += " ...";
  }
  return s;
}

bool is_postgres(const std::string& spec) {
  return spec.rfind("postgresql://", 0) == 0 || spec.rfind("postgres://", 0) == 0;
}

std::unique_ptr<Database> open_database(const std::string& spec, Access access) {
  if (spec.empty()) throw UsageError("--db: empty; give a file or a postgresql:// address");
  if (is_postgres(spec)) return open_postgres(spec);
  refuse_other_scheme(spec);
  return open_sqlite(spec, access);
}

void require_existing(const std::string& spec, bool given) {
  if (is_postgres(spec)) return;
  refuse_other_scheme(spec);
  std::error_code ec;
  if (!std::filesystem::exists(spec, ec)) {
    const std::string where = given ? "--db " + printable(spec)
                                    : fmt::format("the history database {} (where `history` keeps it without --db)",
                                                  printable(spec));
    throw UsageError(fmt::format("{}: no history database there yet (add runs with `upgradebench history add FILE`)", where));
  }
}

std::string default_database() {
  if (const char* env = std::getenv("UPGRADEBENCH_DB"); env && *env) return env;
  // The XDG base directory specification: a relative XDG_DATA_HOME is invalid and ignored.
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg == '/') return std::string(xdg) + "/upgradebench/history.sqlite";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.local/share/upgradebench/history.sqlite";
  throw UsageError("no history database: give --db, or set UPGRADEBENCH_DB or HOME");
}

}  // namespace ub::history
