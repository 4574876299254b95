// Byte counts as the tool reports them: GiB (2^30 bytes), the unit of every memory figure in the
// records, the catalog's usable capacities and the memory fits.
#pragma once

#include <cstddef>

namespace ub {

inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

constexpr double to_gib(size_t bytes) { return static_cast<double>(bytes) / kBytesPerGiB; }

}  // namespace ub
