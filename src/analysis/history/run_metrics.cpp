// A run's figures for the history; see run_metrics.hpp.
#include "analysis/history/run_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <cmath>
#include <map>

#include "base/error.hpp"
#include "base/text.hpp"
#include "records/decomposition_records.hpp"

#include "facts/collectives.hpp"

namespace ub {

namespace {

// The telemetry of one record into a point (the hottest, the reasons OR-ed; clocks and power of
// the last record that had them: a point is one record or the steps of one length).
void add_telemetry(MetricPoint& p, const TelemetrySummary& t) {
  if (!t.available) return;
  p.sm_clock_mhz = t.sm_clock_mean;
  p.power_w = t.power_mean_w;
  p.temperature_c = std::max(p.temperature_c.value_or(0.0), t.temperature_max_c);
  p.throttle |= t.reasons;
}

// A rate `value` measured from the time summary `time` (rate = work / time): its interval from
// the time's median interval, inverted.
MetricPoint rate_point(std::string metric, double x, int gpu, double value, const std::optional<TimeStats>& time) {
  MetricPoint p;
  p.metric = std::move(metric);
  p.x = x;
  p.gpu = gpu;
  p.median = p.low = p.high = value;
  if (time && time->ms.median > 0 && time->ms.median_low > 0) {
    const Summary& t = time->ms;
    p.n = t.n;
    // A figure the record left out is not known (NaN): a copy with some figures taken out is
    // compared on the rest.
    const auto said = [&](double v, unsigned bit) { return time->written & bit ? v : std::nan(""); };
    p.summary = {static_cast<double>(t.n), said(t.mean, TimeStats::kMean), said(t.stddev, TimeStats::kStddev),
                 said(t.min, TimeStats::kMin), said(t.max, TimeStats::kMax), said(t.q1, TimeStats::kQ1), t.median,
                 said(t.q3, TimeStats::kQ3), said(t.median_low, TimeStats::kMedianLow),
                 said(t.median_high, TimeStats::kMedianHigh)};
    // The time's ratio first: median / median_high rounds to at most 1 and median / median_low to
    // at least 1 (rounding is monotone and 1 is exact), so each end lies on its side of the rate,
    // where an end is the median too. (value * median) / median_low can round past the rate.
    p.low = value * (time->ms.median / time->ms.median_high);
    p.high = value * (time->ms.median / time->ms.median_low);
  }
  return p;
}

// A figure from many samples: their median and its interval.
MetricPoint sample_point(std::string metric, double x, int gpu, const std::vector<double>& samples) {
  const Summary s = summarize(samples);
  MetricPoint p;
  p.metric = std::move(metric);
  p.x = x;
  p.gpu = gpu;
  p.n = s.n;
  p.median = s.median;
  p.low = s.median_low;
  p.high = s.median_high;
  return p;
}

}  // namespace

bool higher_is_better(const std::string& metric) { return metric_unit(metric) != "ms"; }

std::string metric_unit(const std::string& metric) {
  if (metric.find("tflops") != std::string::npos) return "TFLOPS";
  if (metric.rfind("nccl.busbw", 0) == 0 || metric.rfind("bandwidth.", 0) == 0) return "GB/s";
  return "ms";
}

std::vector<MetricPoint> training_metrics(const RunLog& run) {
  std::vector<MetricPoint> out;
  for (const RunPoint& point : run.points) {
    std::map<int, std::vector<const StepSample*>> by_gpu;
    for (const StepSample& s : point.steps.steady()) by_gpu[s.device].push_back(&s);
    for (const auto& [gpu, steps] : by_gpu) {
      std::vector<double> ms, tflops;
      std::vector<std::pair<int64_t, double>> numbered;
      for (const StepSample* s : steps) {
        ms.push_back(s->exec_time_ms);
        // A step without its number is known by its place (a distinct key below 0).
        numbered.emplace_back(s->step >= 0 ? s->step : -1 - static_cast<int64_t>(numbered.size()), s->exec_time_ms);
        if (s->tflops) tflops.push_back(*s->tflops);
      }
      const double x = static_cast<double>(point.seqlen);
      MetricPoint time = sample_point("train.step_ms", x, gpu, ms);
      time.steps = std::move(numbered);
      if (auto t = point.steps.telemetry().find(gpu); t != point.steps.telemetry().end()) add_telemetry(time, t->second);
      if (tflops.size() == steps.size()) {
        MetricPoint t = sample_point("train.tflops", x, gpu, tflops);
        t.sm_clock_mhz = time.sm_clock_mhz;
        t.power_w = time.power_w;
        t.temperature_c = time.temperature_c;
        t.throttle = time.throttle;
        out.push_back(std::move(t));
      }
      out.push_back(std::move(time));
    }
  }
  return out;
}

std::vector<MetricPoint> mamf_metrics(const MamfLog& log) {
  const std::string metric = "mamf.tflops." + (log.dtype.empty() ? std::string("unknown") : log.dtype);
  std::vector<MetricPoint> out;
  if (log.outcome.shapes.empty()) {  // mamf-finder.py's footer alone: one figure
    if (auto best = log.best(MamfOutcome::By::median)) {
      out.push_back(rate_point(metric, 0, 0, best->median_tflops, std::nullopt));
    }
    return out;
  }
  std::map<int, const MamfShape*> best;  // per GPU, by median TFLOPS
  for (const MamfShape& s : log.outcome.shapes) {
    if (!s.ok) continue;
    const MamfShape*& b = best[s.device];
    if (!b || s.median_tflops > b->median_tflops) b = &s;
  }
  for (const auto& [gpu, s] : best) {
    MetricPoint p = rate_point(metric, 0, gpu, s->median_tflops, s->time);
    add_telemetry(p, s->telemetry);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<MetricPoint> attention_metrics(const AttentionLog& log) {
  std::vector<MetricPoint> out;
  for (const AttentionRecord& r : log.points) {
    if (r.fwd_tflops <= 0) continue;
    const double x = static_cast<double>(r.seqlen);
    MetricPoint fwd = rate_point("attention.fwd_tflops", x, r.device, r.fwd_tflops, r.fwd_time);
    add_telemetry(fwd, r.telemetry);
    out.push_back(std::move(fwd));
    if (r.fwd_bwd_tflops && *r.fwd_bwd_tflops > 0) {
      MetricPoint both = rate_point("attention.fwd_bwd_tflops", x, r.device, *r.fwd_bwd_tflops, r.fwd_bwd_time);
      add_telemetry(both, r.telemetry);
      out.push_back(std::move(both));
    }
  }
  return out;
}

std::vector<MetricPoint> nccl_metrics(const NcclLog& log) {
  std::vector<MetricPoint> out;
  for (const NcclPoint& pt : log.points) {
    const NcclRecord& r = pt.record;
    if (!r.ok || r.busbw_gbps <= 0) continue;
    const std::string metric = fmt::format("nccl.busbw.{}.{}{}", to_string(r.collective), r.dtype,
                                           r.in_place ? ".in_place" : "");
    MetricPoint p = rate_point(metric, static_cast<double>(r.bytes), 0, r.busbw_gbps, r.time);
    add_telemetry(p, r.telemetry);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<MetricPoint> decomposition_metrics(const DecompositionLog& log, std::vector<std::string>& warnings) {
  const std::optional<int64_t> seqlen = printout_record(log).seqlen;  // the header's length, checked once
  const double x = seqlen ? static_cast<double>(*seqlen) : 0.0;
  std::vector<MetricPoint> out;
  const auto add = [&](const std::string& bucket, double ms, int gpu) {
    if (ms <= 0) return;
    std::string name = bucket;
    std::replace(name.begin(), name.end(), ' ', '_');
    out.push_back(rate_point("decompose.ms." + name, x, gpu, ms, std::nullopt));
  };
  if (log.records.empty()) {  // a printout: one GPU, its step the TOTAL line or its buckets' sum
    for (const DecompositionBucket& b : with_total_line(log).buckets) add(b.name, b.ms, 0);
    return out;
  }
  // Our records: each GPU's decomposition under its index, a distributed job's under its rank
  // (every rank may be device 0 of its own process).
  std::set<int64_t> seen;
  for (size_t i = 0; i < log.records.size(); ++i) {
    const DecompositionRecord& r = log.records[i];
    const int64_t gpu = decomposition_gpu_index(r);
    if (!seen.insert(gpu).second) {
      warnings.push_back(fmt::format("{}: a second decomposition of GPU {}{} ({}) left out: a run stores one per GPU; "
                                     "decompose each trace to a file of its own (--out) to store it",
                                     log.record_where[i], gpu, r.rank ? " (by rank)" : "", printable(r.file)));
      continue;
    }
    for (const DecompositionBucketRecord& b : r.buckets) add(b.name, b.ms, static_cast<int>(gpu));
  }
  return out;
}

std::vector<MetricPoint> bandwidth_metrics(const std::vector<BandwidthRecord>& records) {
  std::vector<MetricPoint> out;
  for (const BandwidthRecord& r : records) {
    if (!r.ok) continue;
    MetricPoint p = rate_point("bandwidth.gbps." + r.op, static_cast<double>(r.bytes), r.device, r.median_gbps, r.time);
    add_telemetry(p, r.telemetry);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace ub
