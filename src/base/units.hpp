// The units every figure of the tool is in, and the rates made from work and time, written once:
//
//   GiB     = bytes / 2^30            every memory figure (records, usable capacities, memory fits)
//   TFLOP   = flop / 1e12             work (decimal tera, as every peak in the catalog)
//   TFLOPS  = TFLOP / seconds         a rate of matrix work
//   GB/s    = bytes / 1e9 / seconds   a rate of memory or link traffic (decimal, as the catalog)
//   fraction of a ceiling = achieved / ceiling: MFU (of the dense peak), "of spec", "of peak",
//           "of published MAMF"; none when the ceiling is unknown or not positive
//
// A time that is not positive gives a rate of 0, which no caller prints as a measurement.
#pragma once

#include <cstddef>
#include <optional>

namespace ub {

inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

constexpr double to_gib(size_t bytes) { return static_cast<double>(bytes) / kBytesPerGiB; }

constexpr double to_tflop(double flop) { return flop / 1e12; }

constexpr double tflops_from(double flop, double ms) { return ms > 0 ? to_tflop(flop) / (ms / 1e3) : 0; }

// The time `flop` takes at `tflops`, in ms (the inverse of tflops_from); 0 for a rate that is not positive.
constexpr double ms_at(double flop, double tflops) { return tflops > 0 ? to_tflop(flop) / tflops * 1e3 : 0; }

constexpr double gbps_from(double bytes, double ms) { return ms > 0 ? bytes / 1e9 / (ms / 1e3) : 0; }

constexpr std::optional<double> fraction_of(std::optional<double> achieved, std::optional<double> ceiling) {
  if (!achieved || !ceiling || !(*ceiling > 0)) return std::nullopt;
  return *achieved / *ceiling;
}

}  // namespace ub
