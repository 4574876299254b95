// Run-log helpers; see run_log.hpp.
#include "records/run_log.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.hpp"
#include "base/text.hpp"

namespace ub {

namespace {

// splitmix64: a small generator with a fixed seed, so a sampled point reads the same every time.
uint64_t next_random(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// One step's telemetry into a GPU's: the hottest, the reasons OR-ed, clocks and power of the last.
void fold_telemetry(TelemetrySummary& into, const TelemetrySummary& t) {
  if (!t.available) return;
  const double hottest = into.available ? std::max(into.temperature_max_c, t.temperature_max_c) : t.temperature_max_c;
  const uint64_t reasons = into.reasons | t.reasons;
  into = t;
  into.temperature_max_c = hottest;
  into.reasons = reasons;
}

}  // namespace

void PointSteps::add(const TrainStep& s, int line) {
  if (s.peak_mem_gib && !(peak_mem_gib_ && *peak_mem_gib_ >= *s.peak_mem_gib)) peak_mem_gib_ = *s.peak_mem_gib, peak_mem_line_ = line;
  if (s.peak_mem_gib && !(least_peak_mem_gib_ && *least_peak_mem_gib_ <= *s.peak_mem_gib)) {
    least_peak_mem_gib_ = *s.peak_mem_gib, least_peak_mem_line_ = line;
  }
  if (s.warmup) {
    ++warmup_;
    const StepSample sample{s.exec_time_ms, s.tflops, s.device, line, s.step};
    if (warmup_extremes_.size() < kWarmupKept) {  // the first ones, each as it is
      warmup_extremes_.push_back(sample);
    } else {  // beyond: the fastest and the most TFLOPS, in the first two places
      if (sample.exec_time_ms < warmup_extremes_[0].exec_time_ms) warmup_extremes_[0] = sample;
      if (sample.tflops.value_or(0) > warmup_extremes_[1].tflops.value_or(0)) warmup_extremes_[1] = sample;
    }
    return;
  }
  if (steady_seen_ == 0) attention_share_ = s.attention_share;
  ++steady_seen_;
  without_tflops_ += !s.tflops;
  if (s.telemetry) fold_telemetry(telemetry_[s.device], *s.telemetry);
  if (s.telemetry && s.telemetry->available && s.telemetry->mean_power_w() > 0) {
    Energy& e = energy_[s.device];
    const TelemetrySummary& t = *s.telemetry;
    if (t.energy_j && t.window_s > 0) {
      e.window_j += *t.energy_j, e.window_s += t.window_s, e.windowed_step_s += s.exec_time_ms * 1e-3;
      energy_source_ = t.energy_source;
    } else {
      e.sampled_j += t.power_mean_w * s.exec_time_ms * 1e-3;
      if (energy_source_.empty()) energy_source_ = "mean sampled power";
    }
    ++e.steps;
  }
  if (const auto& e = s.expert_tokens) {
    if (!expert_extremes_) expert_extremes_ = *e;
    expert_extremes_->min = std::min(expert_extremes_->min, e->min);
    expert_extremes_->max = std::max(expert_extremes_->max, e->max);
    if (expert_medians_.size() < kStepsKept) expert_medians_.push_back(e->median);
  }
  const StepSample sample{s.exec_time_ms, s.tflops, s.device, line, s.step};
  if (kept_.size() < kStepsKept) {
    kept_.push_back(sample);
    return;
  }
  // Reservoir sampling (Vitter's algorithm R): the n-th steady step takes the place of a kept one
  // with probability kStepsKept / n, so every step is in the sample with the same probability.
  const uint64_t slot = next_random(random_) % steady_seen_;
  if (slot < kStepsKept) kept_[slot] = sample;
}

std::optional<double> PointSteps::joules_per_step() const {
  if (energy_.empty()) return std::nullopt;
  double joules = 0;
  for (const auto& [device, e] : energy_) {
    const double windowed = e.window_s > 0 ? e.window_j / e.window_s * e.windowed_step_s : 0;
    joules += (windowed + e.sampled_j) / static_cast<double>(e.steps);
  }
  return joules;
}

std::optional<TrainStep::ExpertTokens> PointSteps::expert_tokens() const {
  if (!expert_extremes_) return std::nullopt;
  TrainStep::ExpertTokens t = *expert_extremes_;
  t.median = summarize(expert_medians_).median;
  return t;
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
    if (p.steps.has_steady() || !p.oom_message.empty()) {
      kept.push_back(std::move(p));
      continue;
    }
    if (warmup_only == WarmupOnly::refuse) throw WorkError(message(p));
    run.warnings.push_back(message(p) + ": left out (warm-up only)");
  }
  run.points = std::move(kept);
}

void note_sampled_points(RunLog& run) {
  for (const RunPoint& p : run.points) {
    if (!p.steps.sampled()) continue;
    run.warnings.push_back(fmt::format("{}:{}: seq_len={} has {} steady steps: its statistics are of a uniform sample "
                                       "of {} of them", run.path, p.line, p.seqlen, p.steps.steady_count(), kStepsKept));
  }
}

PointStats point_stats(const RunLog& run, const RunPoint& p) {
  const std::vector<StepSample>& steady = p.steps.steady();
  if (steady.empty()) {
    throw WorkError(fmt::format("{}:{}: seq_len={} has no steady (non-warm-up) steps", run.path,
                                p.line, p.seqlen));
  }
  PointStats s;
  s.steady_steps = p.steps.steady_count();
  std::vector<double> times, tflops;
  for (const StepSample& r : steady) {
    times.push_back(r.exec_time_ms);
    if (r.tflops) tflops.push_back(*r.tflops);
  }
  s.time_ms = summarize(times);
  if (p.steps.all_have_tflops()) s.tflops = summarize(tflops);
  s.peak_mem_gib = p.steps.peak_mem_gib();
  return s;
}

std::vector<std::pair<double, double>> memory_points(const RunLog& run) {
  std::vector<std::pair<double, double>> pts;
  for (const RunPoint& p : run.points) {
    if (p.status != PointStatus::ok || !p.steps.has_steady()) continue;
    if (const auto gib = point_stats(run, p).peak_mem_gib) {
      pts.emplace_back(static_cast<double>(p.seqlen) * static_cast<double>(run.batch), *gib);
    }
  }
  return pts;
}

std::vector<std::string> varying_peaks(const RunLog& run) {
  std::vector<std::string> out;
  for (const RunPoint& p : run.points) {
    const auto most = p.steps.peak_mem_gib(), least = p.steps.least_peak_mem_gib();
    if (p.status != PointStatus::ok || !most || !least || *least <= 0) continue;
    if (*most > kPeakSpread * *least && *most - *least >= 0.5) {
      out.push_back(fmt::format("{}:{}: seqlen {}: the steps' peak memory varies from {:.2f} GiB (line {}) to {:.2f} GiB: "
                                "one setting's steps peak alike (runs of several settings in one file, or memory "
                                "growing step after step?); the fit reads the largest",
                                run.path, p.steps.peak_mem_line(), p.seqlen, *least, p.steps.least_peak_mem_line(), *most));
    }
  }
  return out;
}

RunSharding sharding_of(const RunLog& run) {
  const auto said = [&](std::initializer_list<const char*> keys) -> std::string {
    for (const char* k : keys) {
      if (const auto it = run.config.find(k); it != run.config.end()) return it->second;
    }
    return "";
  };
  const auto count = [](const std::string& v, int64_t otherwise) -> int64_t {
    try {
      return v.empty() ? otherwise : std::stoll(v);
    } catch (const std::exception&) {
      return otherwise;
    }
  };
  RunSharding s;
  s.world_size = count(said({"world_size"}), 1);
  s.zero_stage = count(said({"zero_stage", "zero"}), 0);
  const std::string offload = to_lower(said({"offload_optimizer", "offload_optim"}));
  s.offload_optimizer = offload == "true" || offload == "1" || offload == "yes";
  return s;
}

}  // namespace ub
