// The matmul-ceiling driver; the method is stated in mamf.hpp.
#include "measure/mamf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <tuple>

#include "gpu/gemm.hpp"
#include "gpu/nvml.hpp"
#include "gpu/telemetry_sampler.hpp"
#include "gpu/timing.hpp"

namespace ub::measure {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Timing for one shape: which algorithm won and its samples.
struct ShapeTiming {
  MamfShape result;
  json record;
};

json summary_json(const Summary& s) {
  return {{"n", s.n},           {"mean", s.mean},     {"median", s.median},
          {"min", s.min},       {"max", s.max},       {"q1", s.q1},
          {"q3", s.q3},         {"stddev", s.stddev}, {"median_low", s.median_low},
          {"median_high", s.median_high}};
}

class ShapeRunner {
 public:
  ShapeRunner(const MamfConfig& c, DeviceRun& s)
      : cfg_(c), run_(s), flusher_(s.l2_bytes), workspace_(c.workspace_bytes) {}

  // quick: screening timing only (search mode); full: the winner timed under the full policy.
  ShapeTiming measure(const gpu::GemmShape& shape, bool quick) {
    const auto started = Clock::now();
    ShapeTiming out = measure_untimed(shape, quick);
    out.record["elapsed_s"] = std::chrono::duration<double>(Clock::now() - started).count();
    return out;
  }

  ShapeTiming measure_untimed(const gpu::GemmShape& shape, bool quick) {
    ShapeTiming out;
    out.result.device = run_.device;
    out.result.m = shape.m;
    out.result.n = shape.n;
    out.result.k = shape.k;
    out.record = {{"type", "mamf"},       {"device", run_.device},
                  {"dtype", to_string(cfg_.dtype)}, {"m", shape.m},
                  {"n", shape.n},          {"k", shape.k},
                  {"flop", shape.flops()}, {"quick", quick}};
    if (auto why = gpu::gemm_shape_problem(cfg_.dtype, shape)) {
      out.result.error = *why;
      out.record["error"] = *why;
      return out;
    }
    const cudaStream_t st = stream_.get();
    gpu::GemmOperands ops(cfg_.dtype, shape, cfg_.seed, st);
    gpu::GemmPlan plan(lt_, ops, workspace_.bytes(), cfg_.top_k);

    // Validate every candidate before any of its timings counts.
    std::vector<int> valid;
    json checks = json::array();
    for (size_t a = 0; a < plan.algos().size(); ++a) {
      ops.randomise_output(cfg_.seed + 7 + a, st);
      plan.run(static_cast<int>(a), ops, workspace_, st);
      const gpu::GemmCheck c = gpu::check_gemm(ops, cfg_.check_samples, cfg_.seed + a, st);
      checks.push_back({{"rank", a}, {"ok", c.ok}, {"worst_ratio", c.worst_ratio},
                        {"failures", c.failures}, {"nans", c.nans}});
      if (c.ok) valid.push_back(static_cast<int>(a));
      else if (out.result.error.empty()) out.result.error = "validation failed: " + c.detail;
    }
    out.record["checks"] = checks;
    if (valid.empty()) {
      out.record["error"] = out.result.error;
      return out;
    }
    out.result.error.clear();

    uint64_t salt = 100;
    const gpu::Work prepare = [&](cudaStream_t s) {
      flusher_.flush(s);
      ops.randomise_output(cfg_.seed + salt++, s);
    };
    // Screening: a few samples of each valid algorithm, best median wins.
    // Search's quick look at a shape takes fewer samples: it only ranks shapes, and the finalists
    // are timed in full.
    gpu::TimingPolicy screen;
    screen.min_samples = quick ? 3 : 5;
    screen.max_samples = quick ? 3 : 10;
    screen.max_seconds = 0.25;
    screen.target_noise = 0.02;
    screen.batch = quick ? 3 : 5;
    int best = valid.front();
    gpu::Timing best_timing;
    json screened = json::array();
    for (int a : valid) {
      const gpu::Work work = [&, a](cudaStream_t s) { plan.run(a, ops, workspace_, s); };
      work(st);  // one untimed run: first-use costs stay out
      gpu::Timing t = gpu::time_samples(st, prepare, work, screen, run_.interrupted);
      screened.push_back({{"rank", a}, {"median_ms", t.summary.median}});
      if (best_timing.ms.empty() || t.summary.median < best_timing.summary.median) {
        best = a;
        best_timing = std::move(t);
      }
      if (run_.stop_requested()) break;
    }
    out.record["screened"] = screened;

    gpu::TelemetrySampler sampler(run_.nvml.get());
    if (!quick && !run_.stop_requested()) {
      gpu::TimingPolicy full;
      full.min_samples = cfg_.min_samples;
      full.max_samples = cfg_.max_samples;
      full.max_seconds = cfg_.max_seconds_per_shape;
      full.target_noise = cfg_.target_noise;
      const gpu::Work work = [&](cudaStream_t s) { plan.run(best, ops, workspace_, s); };
      sampler.start();
      best_timing = gpu::time_samples(st, prepare, work, full, run_.interrupted);
    }
    const TelemetrySummary tel = quick ? TelemetrySummary{} : sampler.stop();
    const Summary& s = best_timing.summary;
    const double f = shape.flops();
    out.result.ok = true;
    out.result.mean_tflops = f / (s.mean * 1e-3) / 1e12;
    out.result.median_tflops = f / (s.median * 1e-3) / 1e12;
    out.result.max_tflops = f / (s.min * 1e-3) / 1e12;
    const gpu::AlgoInfo& info = plan.algos()[static_cast<size_t>(best)];
    out.record["algo"] = {{"rank", info.heuristic_rank}, {"id", info.id},
                          {"tile", info.tile},           {"stages", info.stages},
                          {"split_k", info.split_k},     {"reduction", info.reduction},
                          {"swizzle", info.swizzle},     {"custom", info.custom},
                          {"workspace", info.workspace}, {"waves", info.waves}};
    out.record["algos_tried"] = plan.algos().size();
    out.record["algos_valid"] = valid.size();
    out.record["time_ms"] = summary_json(s);
    out.record["cv"] = s.cv();
    out.record["relative_noise"] = s.relative_noise();
    out.record["stop"] = best_timing.stop_reason;
    out.record["tflops"] = {{"mean", out.result.mean_tflops},
                            {"median", out.result.median_tflops},
                            {"max", out.result.max_tflops}};
    out.record["telemetry"] = tel.to_json();
    return out;
  }

  // Runs the shape's first algorithm back to back for `seconds`.
  void warm_up(const gpu::GemmShape& shape, double seconds) {
    if (seconds <= 0 || gpu::gemm_shape_problem(cfg_.dtype, shape)) return;
    gpu::GemmOperands ops(cfg_.dtype, shape, cfg_.seed, stream_.get());
    gpu::GemmPlan plan(lt_, ops, workspace_.bytes(), 1);
    gpu::warm_up(stream_.get(), [&](cudaStream_t s) { plan.run(0, ops, workspace_, s); }, seconds);
  }

 private:
  const MamfConfig& cfg_;
  DeviceRun& run_;
  gpu::Stream stream_;
  gpu::CublasLt lt_;
  gpu::L2Flusher flusher_;
  gpu::DeviceBuffer workspace_;
};

std::string progress_line(int index, const MamfShape& s, const MamfOutcome& so_far) {
  if (!s.ok) return fmt::format("{:6} | {} failed: {}", index, s.shape(), s.error);
  const auto best = so_far.best(MamfOutcome::By::median);
  return fmt::format("{:6} | {:6.1f}(mean) {:6.1f}(median) {:6.1f}(max) @ {:<18} | best: {:.1f} @ {}",
                     index, s.mean_tflops, s.median_tflops, s.max_tflops, s.shape(),
                     best ? best->median_tflops : 0.0, best ? best->shape() : "-");
}

// Index-space search over the grid ms x ns x ks (see mamf.hpp).
struct Lattice {
  const std::vector<int64_t>& ms;
  const std::vector<int64_t>& ns;
  const std::vector<int64_t>& ks;
  using Point = std::tuple<size_t, size_t, size_t>;
  gpu::GemmShape shape(const Point& p) const {
    return {ms[std::get<0>(p)], ns[std::get<1>(p)], ks[std::get<2>(p)]};
  }
};

}  // namespace

json MamfConfig::to_json() const {
  return {{"dtype", to_string(dtype)}, {"m", ms}, {"n", ns}, {"k", ks}, {"top_k", top_k},
          {"warmup_s", warmup_s}, {"min_samples", min_samples}, {"max_samples", max_samples},
          {"max_seconds_per_shape", max_seconds_per_shape}, {"target_noise", target_noise},
          {"workspace_bytes", workspace_bytes}, {"check_samples", check_samples}, {"seed", seed},
          {"search", search}, {"search_budget_s", search_budget_s},
          {"l2_flush", "256 MiB memset before every sample"},
          {"output", "re-randomised before every sample"}};
}

MamfOutcome run_mamf(const MamfConfig& cfg, DeviceRun& run) {
  if (auto why = gpu::gemm_unsupported_reason(cfg.dtype, run.cc_major, run.cc_minor)) {
    throw UsageError(fmt::format("{} (GPU {}: {})", *why, run.device, run.device_name));
  }
  ShapeRunner runner(cfg, run);
  MamfOutcome out;
  int index = 0;
  auto record_full = [&](const gpu::GemmShape& sh) {
    ShapeTiming t = runner.measure(sh, false);
    out.shapes.push_back(t.result);
    if (run.writer) run.writer->write(t.record);
    if (run.progress) run.progress->line(progress_line(++index, t.result, out));
  };

  const std::vector<int64_t>& ms = cfg.ms;
  const std::vector<int64_t>& ns = cfg.ns;
  const std::vector<int64_t>& ks = cfg.ks;
  if (run.progress) {
    run.progress->line(fmt::format("GPU {} ({}): warming up for {:.0f} s", run.device,
                                       run.device_name, cfg.warmup_s));
  }
  runner.warm_up({ms.back(), ns.back(), ks.back()}, cfg.warmup_s);
  const auto start = Clock::now();  // elapsed and the search budget count from here

  if (!cfg.search) {
    for (int64_t m : ms) {
      for (int64_t n : ns) {
        for (int64_t k : ks) {
          if (run.stop_requested()) break;
          if (run.progress) run.progress->update(fmt::format("GPU {}: {}x{}x{} ...", run.device, m, n, k));
          record_full({m, n, k});
        }
      }
    }
  } else {
    // Search: quick-time a coarse sub-grid (every other index, and the last), then climb from
    // the best three to their neighbours until the best three are all explored, then time the
    // three best in full.
    const Lattice lat{ms, ns, ks};
    std::map<Lattice::Point, double> seen;  // point -> quick median TFLOPS
    auto quick = [&](const Lattice::Point& p) {
      if (seen.contains(p) || run.stop_requested()) return;
      if (cfg.search_budget_s > 0 &&
          std::chrono::duration<double>(Clock::now() - start).count() > cfg.search_budget_s) {
        return;
      }
      const gpu::GemmShape sh = lat.shape(p);
      if (run.progress) run.progress->update(fmt::format("search: {}x{}x{} ...", sh.m, sh.n, sh.k));
      ShapeTiming t = runner.measure(sh, true);
      seen[p] = t.result.ok ? t.result.median_tflops : 0.0;
      if (run.writer) run.writer->write(t.record);
    };
    auto coarse = [](size_t n) {
      std::vector<size_t> idx;
      for (size_t i = 0; i < n; i += 2) idx.push_back(i);
      if (idx.back() != n - 1) idx.push_back(n - 1);  // the largest size is often the best
      return idx;
    };
    for (size_t i : coarse(ms.size()))
      for (size_t j : coarse(ns.size()))
        for (size_t l : coarse(ks.size())) quick({i, j, l});
    auto top = [&](size_t count) {
      std::vector<std::pair<double, Lattice::Point>> v;
      for (const auto& [p, t] : seen) v.emplace_back(t, p);
      std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      if (v.size() > count) v.resize(count);
      return v;
    };
    std::set<Lattice::Point> expanded;
    while (!run.stop_requested()) {
      bool expanded_any = false;
      for (const auto& [t, p] : top(3)) {
        if (!expanded.insert(p).second) continue;
        expanded_any = true;
        const auto [i, j, l] = p;
        for (int di = -1; di <= 1; ++di)
          for (int dj = -1; dj <= 1; ++dj)
            for (int dl = -1; dl <= 1; ++dl) {
              const long ni = static_cast<long>(i) + di, nj = static_cast<long>(j) + dj,
                         nl = static_cast<long>(l) + dl;
              if (ni < 0 || nj < 0 || nl < 0 || ni >= static_cast<long>(ms.size()) ||
                  nj >= static_cast<long>(ns.size()) || nl >= static_cast<long>(ks.size())) {
                continue;
              }
              quick({static_cast<size_t>(ni), static_cast<size_t>(nj), static_cast<size_t>(nl)});
            }
      }
      if (!expanded_any) break;  // the best three are all explored: converged
    }
    out.shapes_screened = static_cast<int>(seen.size());
    for (const auto& [t, p] : top(3)) {
      if (run.stop_requested()) break;
      record_full(lat.shape(p));
    }
  }
  out.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  out.interrupted = run.stop_requested();
  if (run.writer) {
    json summary = out.summary_json();
    summary["device"] = run.device;
    run.writer->write(summary);
  }
  return out;
}

}  // namespace ub::measure
