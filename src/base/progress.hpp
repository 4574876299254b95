// Progress for long runs, on stderr: on a terminal one line redrawn in place; elsewhere (a log,
// CI) only finished lines are printed, so logs stay readable. Safe to call from several threads.
#pragma once

#include <mutex>
#include <string>

namespace ub {

class Progress {
 public:
  Progress();  // reads whether stderr is a terminal
  explicit Progress(bool terminal) : terminal_(terminal) {}
  // A transient status line (terminal only).
  void update(const std::string& line);
  // A line that stays.
  void line(const std::string& line);
  bool terminal() const { return terminal_; }

 private:
  bool terminal_;
  bool dirty_ = false;
  std::mutex mutex_;
};

}  // namespace ub
