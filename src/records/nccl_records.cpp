// `nccl` records; see nccl_records.hpp and docs/records.md.
#include "records/nccl_records.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.hpp"
#include "base/text.hpp"
#include "facts/dtype.hpp"
#include "records/measurement_bounds.hpp"

namespace ub {

using nlohmann::json;

void NcclConfig::validate(int world) const {
  if (collectives.empty()) throw UsageError("nccl: no collective to measure");
  if (sizes.empty()) throw UsageError("nccl: no size to measure");
  for (int64_t s : sizes) {
    if (s < 1 || s > (int64_t{64} << 30)) throw UsageError(fmt::format("nccl: size {} bytes is out of range (1..64G)", s));
  }
  for (Dtype d : dtypes) {
    if (d != Dtype::bf16 && d != Dtype::fp16 && d != Dtype::fp32 && d != Dtype::fp8) {
      throw UsageError(fmt::format("nccl: dtype {} is not one NCCL reduces (bf16, fp16, fp32, fp8)", to_string(d)));
    }
  }
  if (!in_place && !out_of_place) throw UsageError("nccl: neither in-place nor out-of-place");
  if (root < 0 || root >= world) throw UsageError(fmt::format("nccl: --root {} is outside the {} ranks", root, world));
  timing.validate();
}

int calls_per_sample(int64_t bytes) {
  const int64_t calls = (int64_t{4} << 30) / std::max<int64_t>(bytes, 1);
  return static_cast<int>(std::clamp<int64_t>(calls, 1, 64));
}

void to_json(json& j, const NcclConfig& c) {
  json names = json::array(), dtypes = json::array();
  for (Collective x : c.collectives) names.push_back(to_string(x));
  for (Dtype d : c.dtypes) dtypes.push_back(to_string(d));
  j = {{"collectives", names}, {"dtypes", dtypes}, {"sizes", c.sizes}, {"in_place", c.in_place},
       {"out_of_place", c.out_of_place}, {"root", c.root}, {"graph", c.graph},
       {"check", "every point, exact, before it is timed"}};
  put_timing(j, c.timing);
}

void to_json(json& j, const WorldFacts& w) {
  json ranks = json::array();
  for (const WorldRank& r : w.ranks) {
    ranks.push_back({{"rank", r.rank}, {"local_rank", r.local_rank}, {"device", r.device}, {"host", r.host},
                     {"gpu", r.gpu}, {"uuid", r.uuid}, {"pci_bus_id", r.pci_bus_id}});
  }
  j = {{"launcher", w.launcher}, {"size", w.size}, {"hosts", w.hosts}, {"gpus_per_host", w.gpus_per_host},
       {"ranks", ranks}, {"topology", w.topology}, {"nccl_version", w.nccl_version}, {"nccl_env", w.nccl_env}};
}

void to_json(json& j, const NcclRecord& r) {
  j = {{"type", "nccl"}, {"world_size", r.world_size}, {"collective", to_string(r.collective)}, {"dtype", r.dtype},
       {"bytes", r.bytes}, {"send_count", r.send_count}, {"recv_count", r.recv_count}, {"in_place", r.in_place},
       {"root", r.root}, {"wrong", r.wrong}};
  if (!r.ok) {
    j["error"] = r.error;
    return;
  }
  j["calls_per_sample"] = r.calls_per_sample;
  if (r.time) j["time_ms"] = *r.time;
  j["slowest_rank"] = r.slowest_rank;
  j["time_us"] = r.time_us();
  j["algbw_gbps"] = r.algbw_gbps;
  j["busbw_gbps"] = r.busbw_gbps;
  j["telemetry"] = r.telemetry;
}

void read_nccl_point_name(const Fields& f, NcclRecord& r) {
  // A job of 1 to kMaxRanks ranks: 0 would make every bus bandwidth 0 and every comparison empty.
  const int64_t ranks = f.positive_count("world_size");
  if (ranks > kMaxRanks) {
    throw WorkError(fmt::format("{}: \"world_size\" is {}: more ranks than any job has ({} at most)", f.where(), ranks, kMaxRanks));
  }
  r.world_size = static_cast<int>(ranks);
  const std::string name = f.string("collective");
  const auto c = parse_collective(name);
  if (!c) throw WorkError(fmt::format("{}: unknown collective \"{}\"", f.where(), name));
  r.collective = *c;
  // Torch's dtype names are ours (the peer writes bfloat16 or torch.bfloat16): one dtype, one point.
  r.dtype = dtype_from_torch_name(f.string("dtype"));
  if (!parse_dtype(r.dtype.substr(0, r.dtype.find(" (")))) {
    throw WorkError(fmt::format("{}: dtype \"{}\" is none upgradebench knows (bf16, fp16, fp32, fp8, ...)", f.where(),
                                printable(r.dtype)));
  }
  r.bytes = f.count("bytes");
}

NcclRecord read_nccl_record(const Fields& f) {
  NcclRecord r;
  read_nccl_point_name(f, r);
  r.send_count = f.optional_count("send_count").value_or(0);
  r.recv_count = f.optional_count("recv_count").value_or(0);
  r.in_place = f.boolean_or("in_place", false);
  r.root = static_cast<int>(f.optional_count("root").value_or(0));
  r.error = f.string_or("error", "");
  // A measured point of ours always says how many output elements failed the check: absent or
  // null is not "none".
  if (r.error.empty() && !f.has("wrong")) {
    throw WorkError(fmt::format("{}: no \"wrong\" count: whether the output passed its check is not known", f.where()));
  }
  r.wrong = static_cast<uint64_t>(f.optional_count("wrong").value_or(0));
  r.ok = r.error.empty();
  if (!r.ok) return r;
  r.calls_per_sample = static_cast<int>(f.optional_count("calls_per_sample").value_or(1));
  r.time = read_time_stats(f.object("time_ms"));
  r.slowest_rank = static_cast<int>(f.optional_count("slowest_rank").value_or(0));
  r.algbw_gbps = f.number("algbw_gbps");
  r.busbw_gbps = f.number("busbw_gbps");
  // A bandwidth below zero, or beyond any link (a petabyte a second), is a damaged record.
  for (const auto& [name, v] : {std::pair{"algbw_gbps", r.algbw_gbps}, {"busbw_gbps", r.busbw_gbps}}) {
    if (!(v >= 0) || !(v <= kMaxGbps)) {
      throw WorkError(fmt::format("{}: \"{}\" is {}: a bandwidth from 0 to {:g} GB/s is a measurement, this is not",
                                  f.where(), name, v, kMaxGbps));
    }
  }
  if (auto t = f.optional_object("telemetry")) r.telemetry = read_telemetry(*t);
  return r;
}

}  // namespace ub
