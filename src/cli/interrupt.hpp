// Ctrl-C for long measurements: the first SIGINT sets a flag that the drivers check between
// samples, so the run stops at the next boundary, writes its summary and keeps every record; a
// second SIGINT ends the process at once.
#pragma once

#include <atomic>

namespace ub::cli {

const std::atomic<bool>& install_interrupt_handler();

}  // namespace ub::cli
