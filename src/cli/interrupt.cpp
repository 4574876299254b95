// SIGINT handling; see interrupt.hpp. Only async-signal-safe calls inside the handler.
#include "cli/interrupt.hpp"

#include <csignal>
#include <cstring>
#include <unistd.h>

namespace ub::cli {

namespace {
std::atomic<bool> g_interrupted{false};  // the one process-wide flag a signal handler can reach

void on_sigint(int) {
  if (g_interrupted.exchange(true)) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    return;
  }
  const char msg[] = "\nupgradebench: interrupted; finishing the current measurement and keeping "
                     "every record (Ctrl-C again to abort)\n";
  [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, msg, sizeof msg - 1);
}
}  // namespace

const std::atomic<bool>& install_interrupt_handler() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return g_interrupted;
}

}  // namespace ub::cli
