// Progress lines on stderr; see progress.hpp.
#include "base/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace ub {

Progress::Progress() : terminal_(isatty(STDERR_FILENO) == 1) {}

void Progress::update(const std::string& text) {
  if (!terminal_) return;
  std::lock_guard lock(mutex_);
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
  dirty_ = true;
}

void Progress::line(const std::string& text) {
  std::lock_guard lock(mutex_);
  if (dirty_) std::fputs("\r\033[K", stderr);
  dirty_ = false;
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

}  // namespace ub
