// Collective sizes and bandwidth; see collectives.hpp.
#include "facts/collectives.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/text.hpp"
#include "base/units.hpp"

namespace ub {

std::string_view to_string(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::broadcast: return "broadcast";
    case Collective::reduce: return "reduce";
    case Collective::alltoall: return "alltoall";
    case Collective::sendrecv: return "sendrecv";
  }
  return "?";
}

std::optional<Collective> parse_collective(std::string_view name) {
  for (Collective c : kAllCollectives) {
    if (to_string(c) == name) return c;
  }
  return std::nullopt;
}

std::vector<Collective> parse_collective_list(std::string_view text, std::string_view what) {
  if (trim(text) == "all") return {std::begin(kAllCollectives), std::end(kAllCollectives)};
  std::vector<Collective> out;
  for (const std::string& name : split(text, ',')) {
    const auto c = parse_collective(name);
    if (!c) {
      throw UsageError(fmt::format("{}: unknown collective '{}' (all_reduce, all_gather, reduce_scatter, broadcast, "
                                   "reduce, alltoall, sendrecv, or all)", what, name));
    }
    out.push_back(*c);
  }
  if (out.empty()) throw UsageError(fmt::format("{}: no collective named", what));
  return out;
}

CollectiveCounts collective_counts(Collective c, size_t bytes, size_t element_bytes, int world) {
  const auto n = static_cast<size_t>(world);
  CollectiveCounts out;
  switch (c) {
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::alltoall: {
      const size_t part = bytes / element_bytes / n;  // elements per rank's part
      out.bytes = part * n * element_bytes;
      out.send = c == Collective::all_gather ? part : part * n;
      out.recv = c == Collective::reduce_scatter ? part : part * n;
      break;
    }
    default:
      out.send = out.recv = bytes / element_bytes;
      out.bytes = out.send * element_bytes;
  }
  return out;
}

double bus_factor(Collective c, int world) {
  const double n = world;
  switch (c) {
    case Collective::all_reduce: return 2 * (n - 1) / n;
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::alltoall: return (n - 1) / n;
    default: return 1;
  }
}


std::optional<double> busbw_spec_gbps(const Accelerator& gpu) {
  if (!gpu.interconnect_gbps.known() || gpu.interconnect_gbps.value <= 0) return std::nullopt;
  return gpu.interconnect_gbps.value / 2;
}

}  // namespace ub
