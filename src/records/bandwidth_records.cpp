// `bandwidth` records; see bandwidth_records.hpp and docs/records.md.
#include "records/bandwidth_records.hpp"

#include "base/text.hpp"

#include <fmt/format.h>

#include <cmath>

#include "base/error.hpp"

namespace ub {

using nlohmann::json;

void BandwidthConfig::validate() const {
  if (sizes.empty()) throw UsageError("--sizes: no size given");
  for (const std::string& op : ops) {
    if (op != "copy" && op != "read" && op != "write") {
      throw UsageError(fmt::format("--ops: unknown operation '{}' (copy, read, write)", op));
    }
  }
  for (int64_t size : sizes) {
    if (size < 64) throw UsageError(fmt::format("--sizes: {} bytes is too small (64 at least)", size));
    if (size > (int64_t{16} << 30)) {
      throw UsageError(fmt::format("--sizes: {} bytes is beyond the 16 GiB the checks support", size));
    }
  }
  timing.validate();
}

double bytes_moved(const std::string& op, int64_t bytes) {
  return (op == "copy" ? 2.0 : 1.0) * static_cast<double>(bytes);
}

void to_json(json& j, const BandwidthConfig& c) {
  j = {{"sizes", c.sizes}, {"ops", c.ops}, {"kernel", c.kernel}};
  put_timing(j, c.timing);
}

void to_json(json& j, const BandwidthRecord& r) {
  j = {{"type", "bandwidth"}, {"device", r.device}, {"op", r.op},       {"kernel", r.kernel},
       {"bytes", r.bytes},    {"bytes_moved", r.moved()}, {"in_l2", r.in_l2}};
  if (!r.ok) {
    j["error"] = r.error;
    return;
  }
  j["gbps"] = {{"median", r.median_gbps}, {"mean", r.mean_gbps}, {"max", r.max_gbps}};
  if (r.time) {
    j["time_ms"] = *r.time;
    j["stop"] = r.time->stop;
  }
  j["telemetry"] = r.telemetry;
  j["check"] = "ok";
}

BandwidthRecord read_bandwidth_record(const Fields& f) {
  BandwidthRecord r;
  r.device = static_cast<int>(f.optional_count("device").value_or(0));
  r.op = f.string("op");
  r.kernel = f.string_or("kernel", "");
  r.bytes = f.count("bytes");
  if (r.op != "copy" && r.op != "read" && r.op != "write") {
    throw WorkError(fmt::format("{}: \"op\" is \"{}\": a bandwidth record is a copy, a read or a write", f.where(),
                                printable(r.op)));
  }
  // What the rate counts: said beside the size, it must be what the operation moves.
  if (const auto moved = f.optional_number("bytes_moved"); moved && *moved != r.moved()) {
    throw WorkError(fmt::format("{}: \"bytes_moved\" is {:g}, where a {} of {} bytes moves {:g}: one of the figures is "
                                "wrong", f.where(), *moved, r.op, r.bytes, r.moved()));
  }
  r.in_l2 = f.boolean_or("in_l2", false);
  r.ok = !f.has("error");
  if (!r.ok) {
    r.error = f.string("error");
    return r;
  }
  // A copy whose result did not match what was copied timed something else: no measurement.
  if (!f.has("check")) {
    throw WorkError(fmt::format("{}: no \"check\": whether the copy matched what was copied is not known", f.where()));
  }
  if (f.string("check") != "ok") {
    r.ok = false;
    r.error = fmt::format("its check says \"{}\", not \"ok\"", printable(f.string("check")));
    return r;
  }
  const Fields gbps = f.object("gbps");
  r.median_gbps = gbps.positive("median");
  r.mean_gbps = gbps.optional_number("mean").value_or(r.median_gbps);
  r.max_gbps = gbps.optional_number("max").value_or(r.median_gbps);
  if (f.has("time_ms")) r.time = read_time_stats(f.object("time_ms"));
  if (f.has("telemetry")) r.telemetry = read_telemetry(f.object("telemetry"));
  // The rate is the bytes moved over the time: a pair that disagrees is one figure said twice
  // that is wrong (medians of rates and of times agree but for the middle pair's mean).
  if (r.time && r.time->ms.median > 0 && r.median_gbps > 0) {
    const double implied = r.moved() / (r.time->ms.median * 1e6);
    if (std::abs(r.median_gbps / implied - 1) > 0.05) {
      throw WorkError(fmt::format("{}: {} of {} bytes at a median {:.1f} GB/s beside a median time of {:g} ms, which "
                                  "moves them at {:.1f} GB/s: one of the two figures is wrong", f.where(), r.op, r.bytes,
                                  r.median_gbps, r.time->ms.median, implied));
    }
  }
  return r;
}

}  // namespace ub
