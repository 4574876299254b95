// Ctrl-C for long measurements: the first SIGINT sets a flag that the drivers check between
// samples, so the run stops at the next boundary, writes its summary and keeps every record; a
// second SIGINT ends the process at once.
// For a command whose work is a transaction at a time (history add), an interrupt ends the process
// at once, as the default would, after one line saying what was kept and what was not.
#pragma once

#include <atomic>
#include <string>

namespace ub::cli {

const std::atomic<bool>& install_interrupt_handler();

// From now on SIGINT and SIGTERM print `line` (a newline is added) and end the process by that
// signal; a later call replaces the line.
void end_on_interrupt_saying(const std::string& line);

}  // namespace ub::cli
