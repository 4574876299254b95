// The test PostgreSQL server; see postgres_server.hpp.
#include "postgres_server.hpp"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "store/database.hpp"

namespace ub::testing {

namespace fs = std::filesystem;

namespace {

std::string find_bin() {
  std::string best;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const fs::path bin = e.path() / "bin";
    if (fs::exists(bin / "initdb") && fs::exists(bin / "pg_ctl") && bin.string() > best) best = bin.string();
  }
  return best;
}

class Server {
 public:
  Server() {
    const std::string bin = find_bin();
    if (bin.empty()) {
      why_ = "PostgreSQL's server is not installed (Debian: postgresql); the PostgreSQL tests are skipped";
      return;
    }
    char tmpl[] = "/tmp/ub-pg-XXXXXX";
    if (!mkdtemp(tmpl)) {
      why_ = "cannot make a temporary folder";
      return;
    }
    dir_ = tmpl;
    std::string as;
    if (geteuid() == 0) {
      const passwd* pw = getpwnam("postgres");
      if (!pw) {
        why_ = "running as root and there is no `postgres` user to run the server as";
        return;
      }
      if (chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
        why_ = "cannot give the temporary folder to the postgres user";
        return;
      }
      as = "runuser -u postgres -- ";
    }
    const std::string init = fmt::format("{}{}/initdb -D {}/data -U postgres -A trust -E UTF8 --locale=C --no-sync > {}/initdb.log 2>&1",
                                         as, bin, dir_, dir_);
    if (std::system(init.c_str()) != 0) {
      why_ = fmt::format("initdb failed (see {}/initdb.log)", dir_);
      return;
    }
    stop_ = fmt::format("{}{}/pg_ctl -D {}/data -m immediate stop > /dev/null 2>&1", as, bin, dir_);
    const std::string start = fmt::format(
        "{}{}/pg_ctl -D {}/data -w -t 60 -l {}/server.log -o \"-k {} -c listen_addresses='' -p 5432 -c fsync=off "
        "-c max_connections=50\" start > /dev/null 2>&1",
        as, bin, dir_, dir_, dir_);
    if (std::system(start.c_str()) != 0) {
      why_ = fmt::format("the server did not start (see {}/server.log)", dir_);
      return;
    }
    started_ = true;
  }
  ~Server() {
    if (started_) (void)std::system(stop_.c_str());
    if (!dir_.empty()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }

  std::string url(const std::string& db) const {
    return fmt::format("postgresql:///{}?host={}&port=5432&user=postgres", db, dir_);
  }
  bool started() const { return started_; }
  const std::string& why() const { return why_; }

 private:
  std::string dir_, stop_, why_;
  bool started_ = false;
};

Server& server() {
  static Server s;  // one per test process, stopped at exit
  return s;
}

}  // namespace

std::string fresh_postgres_database(std::string& why) {
  Server& s = server();
  if (!s.started()) {
    why = s.why();
    return "";
  }
  static int counter = 0;
  const std::string name = fmt::format("ub_test_{}_{}", getpid(), ++counter);
  history::open_database(s.url("postgres"))->execute("CREATE DATABASE " + name);
  return s.url(name);
}

}  // namespace ub::testing
