// Run-log helpers; see run_log.hpp.
#include "core/run_log.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace ub {

std::vector<const TrainStep*> RunPoint::steady() const {
  std::vector<const TrainStep*> out;
  for (const TrainStep& s : steps) {
    if (!s.warmup) out.push_back(&s);
  }
  return out;
}

const RunPoint* RunLog::point(int64_t seqlen) const {
  for (const RunPoint& p : points) {
    if (p.seqlen == seqlen) return &p;
  }
  return nullptr;
}

void leave_out_warmup_only(RunLog& run, WarmupOnly warmup_only, const std::function<std::string(const RunPoint&)>& message) {
  std::vector<RunPoint> kept;
  for (RunPoint& p : run.points) {
    if (!p.steady().empty() || !p.oom_message.empty()) {
      kept.push_back(std::move(p));
      continue;
    }
    if (warmup_only == WarmupOnly::refuse) throw WorkError(message(p));
    run.warnings.push_back(message(p) + ": left out (warm-up only)");
  }
  run.points = std::move(kept);
}

PointStats point_stats(const RunLog& run, const RunPoint& p) {
  const auto steady = p.steady();
  if (steady.empty()) {
    throw WorkError(fmt::format("{}:{}: seq_len={} has no steady (non-warm-up) steps", run.path,
                                p.line, p.seqlen));
  }
  PointStats s;
  s.steady_steps = steady.size();
  std::vector<double> times, tflops;
  for (const TrainStep* r : steady) {
    times.push_back(r->exec_time_ms);
    if (r->tflops) tflops.push_back(*r->tflops);
  }
  s.time_ms = summarize(times);
  if (tflops.size() == steady.size()) s.tflops = summarize(tflops);
  for (const TrainStep& r : p.steps) {
    if (r.peak_mem_gib) s.peak_mem_gib = std::max(s.peak_mem_gib.value_or(0.0), *r.peak_mem_gib);
  }
  return s;
}

std::vector<std::pair<double, double>> memory_points(const RunLog& run) {
  std::vector<std::pair<double, double>> pts;
  for (const RunPoint& p : run.points) {
    if (p.status != PointStatus::ok || p.steady().empty()) continue;
    if (const auto gib = point_stats(run, p).peak_mem_gib) {
      pts.emplace_back(static_cast<double>(p.seqlen) * static_cast<double>(run.batch), *gib);
    }
  }
  return pts;
}

}  // namespace ub
