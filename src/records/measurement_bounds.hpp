// What no measurement can be, written once for every reader: beyond these a figure is a damaged
// record (or a hand-edited one), refused naming its line and field, never turned into a ratio.
#pragma once

#include <cstdint>

namespace ub {

inline constexpr double kMaxTflops = 1e6;   // no GPU comes near an exaflop
inline constexpr double kMaxMs = 1e10;      // a step or a wait of four months
inline constexpr double kMinMs = 1e-6;      // a step or a kernel of less than a nanosecond
inline constexpr double kMaxGib = 1e6;      // a million GiB of memory
inline constexpr double kMaxGbps = 1e6;     // a petabyte a second over any link
inline constexpr int64_t kMaxRanks = int64_t{1} << 20;  // a job's ranks (the largest run tens of thousands)

}  // namespace ub
