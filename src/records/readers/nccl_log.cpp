// Reader of collective benchmark logs; the formats are stated in nccl_log.hpp.
#include "records/readers/nccl_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "base/error.hpp"
#include "base/text.hpp"
#include "facts/collectives.hpp"
#include "records/context_record.hpp"
#include "records/readers/repeated_points.hpp"
#include "records/record_file.hpp"

namespace ub {

using nlohmann::json;

namespace {

// How rank 0's host links its GPUs, each kind of link once ("NVLink (18 links active)").
std::string topology_text(const json& topology) {
  std::set<std::string> kinds;
  if (!topology.is_array()) return "";
  for (const json& row : topology) {
    if (!row.is_array()) continue;
    for (const json& cell : row) {
      if (!cell.is_string()) continue;
      const std::string link = cell.get<std::string>();
      if (!link.empty() && link != "-" && link != "self") kinds.insert(link);
    }
  }
  return fmt::format("{}", fmt::join(kinds, ", "));
}

void read_our_context(const Fields& f, NcclLog& log) {
  const ContextRecord c = read_context(f);
  if (!c.fingerprint.gpus.empty() && !c.fingerprint.gpus.front().name.empty()) {
    expect_one_gpu(log.gpu, c.fingerprint.gpus.front().name, f.where());
  }
  log.source = "upgradebench";
  const json& w = c.world;
  if (w.is_object()) {
    if (w.contains("size") && !w["size"].is_number_integer()) {
      throw WorkError(fmt::format("{}: \"world.size\" is {}: a job of 1 to {} ranks", f.where(), printable(w["size"].dump()), kMaxRanks));
    }
    if (w.contains("size")) {
      const int64_t ranks = w["size"].get<int64_t>();
      if (ranks < 1 || ranks > kMaxRanks) {
        throw WorkError(fmt::format("{}: \"world.size\" is {}: a job of 1 to {} ranks", f.where(), ranks, kMaxRanks));
      }
      log.world_size = static_cast<int>(ranks);
    }
    if (w.contains("launcher") && w["launcher"].is_string()) log.details["launcher"] = w["launcher"].get<std::string>();
    if (w.contains("nccl_version") && w["nccl_version"].is_string()) log.details["nccl"] = w["nccl_version"].get<std::string>();
    if (w.contains("topology")) {
      if (std::string t = topology_text(w["topology"]); !t.empty()) log.details["topology"] = t;
    }
  }
  if (c.config.is_object() && c.config.contains("graph") && c.config["graph"].is_boolean()) {
    log.details["calls"] = c.config["graph"].get<bool>() ? "replayed from a CUDA graph" : "launched one by one";
  }
}

// A peer's line: one figure per point, the GPU where the script named it.
NcclPoint read_peer_point(const Fields& f, NcclLog& log) {
  NcclPoint p;
  NcclRecord& r = p.record;
  read_nccl_point_name(f, r);
  r.in_place = f.boolean_or("in_place", false);
  r.ok = true;
  p.time_us = f.positive("time_us");
  r.algbw_gbps = f.number("algbw_gbps");
  r.busbw_gbps = f.number("busbw_gbps");
  log.source = "torch.distributed";
  if (f.has("gpu")) expect_one_gpu(log.gpu, f.string("gpu"), f.where());
  // One log is one stack: a line of another torch or NCCL is another run's.
  for (const char* component : {"torch", "nccl"}) {
    if (!f.has(component)) continue;
    const std::string v = f.string(component);
    const auto [it, fresh] = log.details.try_emplace(component, v);
    if (!fresh && it->second != v) {
      throw WorkError(fmt::format("{}: {} {} here, {} on the lines before: one log holds one run's stack", f.where(),
                                  component, printable(v), printable(it->second)));
    }
  }
  return p;
}

// A point's algorithm bandwidth is its bytes over its time, and its bus bandwidth that times the
// collective's factor (nccl-tests' convention): figures that disagree are one said wrongly.
void refuse_rates_beside_other_time(const NcclPoint& p, const std::string& where) {
  const NcclRecord& r = p.record;
  if (!(p.time_us > 0) || !(r.algbw_gbps > 0)) return;
  const double algbw = static_cast<double>(r.bytes) / (p.time_us * 1e3);
  if (std::abs(r.algbw_gbps / algbw - 1) > 0.05) {
    throw WorkError(fmt::format("{}: {} of {} B: algbw {:.1f} GB/s beside a time of {:g} us, which moves them at {:.1f} GB/s: "
                                "one of the two figures is wrong", where, to_string(r.collective), r.bytes, r.algbw_gbps,
                                p.time_us, algbw));
  }
  if (r.world_size > 0 && r.busbw_gbps > 0) {
    const double busbw = r.algbw_gbps * bus_factor(r.collective, r.world_size);
    if (std::abs(r.busbw_gbps / busbw - 1) > 0.05) {
      throw WorkError(fmt::format("{}: {} of {} B on {} ranks: busbw {:.1f} GB/s, where its algbw gives {:.1f}: one of the "
                                  "two figures is wrong", where, to_string(r.collective), r.bytes, r.world_size,
                                  r.busbw_gbps, busbw));
    }
  }
}

}  // namespace

NcclPointKey key_of(const NcclRecord& r) { return {r.collective, r.dtype, r.in_place, r.bytes}; }

NcclLog read_nccl_log(const LineSource& t) {
  NcclLog log;
  log.path = t.path;
  log.provenance = read_provenance(t);
  size_t ignored = 0, failed_check = 0;
  t.for_each_json_line([&](const Line& l) {  // a damaged result line is skipped, said so
    const std::string line = trim(l.text);
    const std::string where = t.where(l.index);
    if (line.empty() || line[0] == '#') return;
    if (line[0] != '{' && line[0] != '\0') {  // zeros where a line was (a crash) are a damaged line
      ++ignored;
      return;
    }
    const std::optional<json> o = parse_record_line(t, l, log.warnings, "a result line");
    if (!o) return;
    const Fields f(*o, where);
    NcclPoint p;
    if (!o->contains("type")) {
      if (!o->contains("collective")) {
        ++ignored;
        return;
      }
      p = read_peer_point(f, log);
    } else {
      const std::string type = f.string("type");
      if (type == "context") {
        read_our_context(f, log);
        return;
      }
      if (type != "nccl") {
        ++ignored;
        return;
      }
      p.record = read_nccl_record(f);
      if (!p.record.ok) {
        log.warnings.push_back(fmt::format("{}: {} {} {} B failed: {}", where, to_string(p.record.collective),
                                           p.record.dtype, p.record.bytes, p.record.error));
        return;
      }
      // A collective whose output was checked and found wrong timed something other than the
      // collective: its time is no measurement of it, and comparing it as one would be silently wrong.
      if (p.record.wrong > 0) {
        ++failed_check;
        log.warnings.push_back(fmt::format("{}: {} {} {} B left out: {} output elements failed the exactness check",
                                           where, to_string(p.record.collective), p.record.dtype, p.record.bytes,
                                           p.record.wrong));
        return;
      }
      p.time_us = p.record.time_us();
    }
    refuse_rates_beside_other_time(p, where);
    if (log.world_size == 0) log.world_size = p.record.world_size;
    if (p.record.world_size != log.world_size) {
      throw WorkError(fmt::format("{}: {} ranks here, {} before: one log holds one job", where, p.record.world_size,
                                  log.world_size));
    }
    const NcclPointKey k = key_of(p.record);
    const std::string what = fmt::format("{} {} {} B ({})", to_string(k.collective), k.dtype, k.bytes,
                                         k.in_place ? "in place" : "out of place");
    keep_later(log.points, std::move(p), [](const NcclPoint& a, const NcclPoint& b) { return key_of(a.record) == key_of(b.record); },
               [&](const NcclPoint&) { return "first on an earlier line"; }, where, what, log.warnings);
  });
  if (log.points.empty() && failed_check) {
    throw WorkError(fmt::format("{}: every collective result ({}) failed its exactness check (\"wrong\" > 0): nothing "
                                "to compare; rerun nccl and look at the first failing size",
                                t.path, failed_check));
  }
  if (log.points.empty()) throw WorkError(fmt::format("{}: no collective results", t.path));
  std::stable_sort(log.points.begin(), log.points.end(),
                   [](const NcclPoint& a, const NcclPoint& b) { return key_of(a.record) < key_of(b.record); });
  if (ignored) log.warnings.push_back(fmt::format("{} other lines ignored", ignored));
  return log;
}

}  // namespace ub
