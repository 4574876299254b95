// Reader of bandwidth records; see bandwidth_log.hpp.
#include "records/readers/bandwidth_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "base/error.hpp"
#include "records/context_record.hpp"
#include "records/record_file.hpp"

namespace ub {

std::optional<double> BandwidthLog::hbm_gbps(const std::string& op) const {
  std::optional<double> best;
  for (const BandwidthRecord& p : points) {
    if (p.op == op && p.ok && !p.in_l2) best = std::max(best.value_or(0), p.median_gbps);
  }
  return best;
}

BandwidthLog read_bandwidth_log(const LineSource& t) {
  BandwidthLog log;
  log.path = t.path;
  log.provenance = read_provenance(t);
  std::optional<int> first_device;
  size_t other_devices = 0;
  for_each_record(t, [&](const RecordLine& r) {
    const Fields f(r.json, r.where);
    if (r.type == "context") {
      const ContextRecord c = read_context(f);
      if (!c.fingerprint.gpus.empty() && !c.fingerprint.gpus.front().name.empty()) {
        expect_one_gpu(log.gpu, c.fingerprint.gpus.front().name, r.where);
      }
      return;
    }
    if (r.type != "bandwidth") return;
    BandwidthRecord p = read_bandwidth_record(f);
    if (!p.ok) {
      log.warnings.push_back(fmt::format("{}: {} of {} bytes left out: {}", r.where, p.op, p.bytes, p.error));
      return;
    }
    if (!first_device) first_device = p.device;
    if (p.device != *first_device) {
      ++other_devices;
      return;
    }
    log.points.push_back(std::move(p));
  }, log.warnings);
  if (log.points.empty()) {
    throw WorkError(log.warnings.empty() ? fmt::format("{}: no bandwidth records", t.path)
                                         : fmt::format("{}: no bandwidth record to read, {} left out (the first: {})", t.path,
                                                       log.warnings.size(), log.warnings.front()));
  }
  if (other_devices) {
    log.warnings.push_back(fmt::format("{} points of other GPUs measured at the same time left out: GPU {} is read",
                                       other_devices, *first_device));
  }
  return log;
}

}  // namespace ub
