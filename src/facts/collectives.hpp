// The collectives `nccl` measures and the arithmetic of their bandwidth, written once (the
// definitions of nccl-tests, docs/nccl.md):
//
//   a point's size, in bytes          what it is
//   all_reduce, broadcast, reduce     the buffer: each rank sends and receives `size`
//   all_gather                        the gathered output: each rank sends size / n
//   reduce_scatter                    the input: each rank receives size / n
//   alltoall                          what each rank sends (n chunks of size / n), and receives
//   sendrecv                          what each rank sends to the next rank and receives
//
//   algbw = size / time;  busbw = algbw * factor, the factor making busbw comparable with the
//   link's bandwidth whatever the collective:
//   all_reduce 2 (n - 1) / n;  all_gather, reduce_scatter, alltoall (n - 1) / n;
//   broadcast, reduce, sendrecv 1.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "facts/catalog.hpp"

namespace ub {

enum class Collective { all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv };

inline constexpr Collective kAllCollectives[] = {Collective::all_reduce, Collective::all_gather,
                                                 Collective::reduce_scatter, Collective::broadcast,
                                                 Collective::reduce,     Collective::alltoall,
                                                 Collective::sendrecv};

std::string_view to_string(Collective c);
std::optional<Collective> parse_collective(std::string_view name);
// "all_reduce,all_gather" or "all"; UsageError naming `what` and the bad entry.
std::vector<Collective> parse_collective_list(std::string_view text, std::string_view what);

// Elements each rank sends and receives for a point of `bytes` (rounded down so that every rank's
// part is whole elements).
struct CollectiveCounts {
  size_t bytes = 0;  // the point's size after rounding
  size_t send = 0, recv = 0;
};
CollectiveCounts collective_counts(Collective c, size_t bytes, size_t element_bytes, int world);

// busbw / algbw for `world` ranks.
double bus_factor(Collective c, int world);

// What busbw is held against ("of spec"): one direction of the catalog's bidirectional
// interconnect figure for the GPU, when the catalog has one.
std::optional<double> busbw_spec_gbps(const Accelerator& gpu);

}  // namespace ub
