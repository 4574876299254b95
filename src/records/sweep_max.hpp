// sweep --find-max's result record read back, held to the lengths its sweep measured: `decide`
// decides a capability from it and `history add` stores its file, so both refuse a result that is
// not what the sweep ran (an edit, or files joined from two sweeps).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/line_source.hpp"
#include "records/run_log.hpp"
#include "records/train_records.hpp"

namespace ub {

// The last `sweep_max` record of `t` (a search resumed with a higher ceiling goes on from the one
// before; several are said in `warnings`), or none. WorkError naming the line when it says no
// length at all, a longest fit that is not a length that ran or is shorter than one that ran, or a
// shortest out of memory no longer than a length that ran, or longer than one that ran out of memory. `sweep`: the whole file's run.
std::optional<SweepMax> read_sweep_max(const LineSource& t, const RunLog& sweep, std::vector<std::string>& warnings);

}  // namespace ub
