// SIGINT handling; see interrupt.hpp. Only async-signal-safe calls inside the handler.
#include "cli/interrupt.hpp"

#include <csignal>
#include <cstring>
#include <unistd.h>

#include <algorithm>

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

// The line end_on_interrupt_saying() set: written in place, its length set last (0 while it changes).
char g_line[2048];
std::atomic<size_t> g_line_size{0};
bool g_terminal = false;  // stderr is a terminal: its "^C" echo wants a line of its own

void on_end(int sig) {
  const size_t n = g_line_size.load();
  if (n > 0 && g_terminal && sig == SIGINT) {
    [[maybe_unused]] const ssize_t w = write(STDERR_FILENO, "\n", 1);
  }
  if (n > 0) {
    [[maybe_unused]] const ssize_t w = write(STDERR_FILENO, g_line, n);
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// `handler` for SIGINT and SIGTERM.
void handle_interrupts(void (*handler)(int)) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}
}  // namespace

const std::atomic<bool>& install_interrupt_handler() {
  handle_interrupts(on_sigint);
  return g_interrupted;
}

void end_on_interrupt_saying(const std::string& line) {
  g_line_size.store(0);
  const size_t n = std::min(line.size(), sizeof g_line - 2);
  std::memcpy(g_line, line.data(), n);
  g_line[n] = '\n';
  g_line_size.store(n + 1);
  g_terminal = ::isatty(STDERR_FILENO) == 1;
  handle_interrupts(on_end);
}

}  // namespace ub::cli
