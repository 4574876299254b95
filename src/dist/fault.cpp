// Fault injection; see fault.hpp.
#include "dist/fault.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "base/error.hpp"

namespace ub::dist {

void fault_point(const char* point, int rank) {
  const char* spec = std::getenv("UB_FAULT");
  if (!spec || !*spec) return;
  const std::string s = spec;
  const size_t a = s.find(':');
  if (a == std::string::npos) throw UsageError(fmt::format("UB_FAULT={}: expected RANK:POINT[:HOW]", s));
  const size_t b = s.find(':', a + 1);
  const std::string who = s.substr(0, a), where = s.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
  const std::string how = b == std::string::npos ? "throw" : s.substr(b + 1);
  if (who != std::to_string(rank) || where != point) return;
  std::fprintf(stderr, "upgradebench: rank %d: injected fault at %s (%s)\n", rank, point, how.c_str());
  std::fflush(stderr);
  if (how == "exit") std::_Exit(1);
  if (how == "kill") ::kill(::getpid(), SIGKILL);
  if (how == "hang") {
    while (true) std::this_thread::sleep_for(std::chrono::seconds(3600));
  }
  throw WorkError(fmt::format("injected fault at {} (UB_FAULT)", point));
}

}  // namespace ub::dist
