// The matmul-ceiling benchmark's descriptor; the method is stated in mamf.hpp.
#include "measure/mamf.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.hpp"
#include "base/units.hpp"
#include "facts/gpu_features.hpp"
#include "gpu/gemm.hpp"
#include "gpu/timing.hpp"
#include "measure/injected_wrong.hpp"

namespace ub::measure {

using Clock = std::chrono::steady_clock;

class MamfPoint : public Point {
 public:
  MamfPoint(MamfBenchmark& b, MamfShape shape, cudaStream_t s)
      : b_(b), rec_(std::move(shape)), s_(s), ops_(b.cfg_.dtype, {rec_.m, rec_.n, rec_.k}, b.cfg_.seed, s),
        plan_(*b.lt_, ops_, b.workspace_->bytes(), b.cfg_.top_k) {}

  // Every candidate is checked before any of its timings counts.
  std::optional<std::string> check() override {
    const MamfConfig& c = b_.cfg_;
    std::string first_failure;
    for (size_t a = 0; a < plan_.algos().size(); ++a) {
      ops_.randomise_output(c.seed + 7 + a, s_);
      plan_.run(static_cast<int>(a), ops_, *b_.workspace_, s_);
      spoil_if_injected("mamf", ops_.d, s_);
      GemmCheck check = gpu::check_gemm(ops_, c.check_samples, c.seed + a, s_);
      check.rank = static_cast<int>(a);
      if (check.ok) valid_.push_back(static_cast<int>(a));
      else if (first_failure.empty()) first_failure = check.detail;
      rec_.checks.push_back(std::move(check));
    }
    rec_.algos_tried = static_cast<int>(plan_.algos().size());
    rec_.algos_valid = static_cast<int>(valid_.size());
    if (valid_.empty()) return first_failure;
    return std::nullopt;
  }

  // Screening: a few samples of each valid algorithm, the best median wins. A quick look at a shape
  // (search) takes fewer: it only ranks shapes, and the finalists are timed in full.
  void tune(const std::atomic<bool>* interrupted) override {
    TimingPolicy screen;
    screen.min_samples = screen.max_samples = screen.batch = rec_.quick ? 3 : 5;
    if (!rec_.quick) screen.max_samples = 10;
    screen.max_seconds = 0.25;
    screen.target_noise = 0.02;
    for (int a : valid_) {
      const gpu::Work work = [this, a](cudaStream_t s) { plan_.run(a, ops_, *b_.workspace_, s); };
      work(s_);  // one untimed run: first-use costs stay out
      gpu::Timing t = gpu::time_samples(s_, prepare(), work, screen, interrupted);
      rec_.screened.push_back({a, t.summary.median});
      if (screening_.ms.empty() || t.summary.median < screening_.summary.median) best_ = a, screening_ = std::move(t);
      if (interrupted && interrupted->load()) break;
    }
  }

  std::vector<TimedUnit> units() override {
    if (rec_.quick) return {};
    return {{"", [this](cudaStream_t s) { plan_.run(best_, ops_, *b_.workspace_, s); }, prepare(), std::nullopt, false}};
  }

  std::string record(const Measured& m) override {
    rec_.elapsed_s = m.elapsed_s;
    if (!m.error.empty()) {
      rec_.error = "validation failed: " + m.error;
    } else if (!screening_.ms.empty()) {
      const gpu::Timing& t = m.timings.empty() ? screening_ : m.timings.front();
      const double f = rec_.flops();
      rec_.ok = true;
      rec_.mean_tflops = tflops_from(f, t.summary.mean);
      rec_.median_tflops = tflops_from(f, t.summary.median);
      rec_.max_tflops = tflops_from(f, t.summary.min);
      rec_.algo = plan_.algos()[static_cast<size_t>(best_)];
      rec_.time = TimeStats{t.summary, t.stop_reason};
      if (!m.timings.empty()) rec_.telemetry = m.telemetry;
    } else {
      rec_.error = "interrupted before it was timed";
    }
    b_.run_.emit(rec_);
    b_.measured(rec_);
    return rec_.quick ? "" : b_.progress_line(rec_);
  }

 private:
  // Before each sample: evict L2 and re-randomise the output, as mamf-finder.py does.
  gpu::Work prepare() {
    return [this](cudaStream_t s) {
      b_.flusher_->flush(s);
      ops_.randomise_output(b_.cfg_.seed + salt_++, s);
    };
  }

  MamfBenchmark& b_;
  MamfShape rec_;
  cudaStream_t s_;
  gpu::GemmOperands ops_;
  gpu::GemmPlan plan_;
  std::vector<int> valid_;
  int best_ = 0;
  gpu::Timing screening_;  // the winner's screening samples
  uint64_t salt_ = 100;
};

MamfBenchmark::MamfBenchmark(const MamfConfig& config, DeviceRun& run)
    : Benchmark(config.timing), cfg_(config), run_(run) {
  cfg_.validate();
  if (auto why = gemm_unsupported_reason(cfg_.dtype, ComputeCapability{run.cc_major, run.cc_minor})) {
    throw UsageError(fmt::format("{} (GPU {}: {})", *why, run.device, run.device_name));
  }
  lt_ = std::make_unique<gpu::CublasLt>();
  flusher_ = std::make_unique<gpu::L2Flusher>(run.l2_bytes);
  workspace_ = std::make_unique<gpu::DeviceBuffer>(cfg_.workspace_bytes);
  const size_t nm = cfg_.ms.size(), nn = cfg_.ns.size(), nk = cfg_.ks.size();
  if (!cfg_.listed.empty()) {
    for (size_t i = 0; i < cfg_.listed.size(); ++i) queue_.push_back({{i, i, i}, false});  // the diagonal: shape i
  } else if (!cfg_.search) {
    for (size_t i = 0; i < nm; ++i)
      for (size_t j = 0; j < nn; ++j)
        for (size_t l = 0; l < nk; ++l) queue_.push_back({{i, j, l}, false});
  } else {
    // A coarse sub-grid: every other index, and the last (the largest size is often the best).
    auto coarse = [](size_t n) {
      std::vector<size_t> idx;
      for (size_t i = 0; i < n; i += 2) idx.push_back(i);
      if (idx.back() != n - 1) idx.push_back(n - 1);
      return idx;
    };
    for (size_t i : coarse(nm))
      for (size_t j : coarse(nn))
        for (size_t l : coarse(nk)) queue_.push_back({{i, j, l}, true});
  }
  std::reverse(queue_.begin(), queue_.end());  // next at the back
  start_ = Clock::now();
}

MamfBenchmark::~MamfBenchmark() = default;

MamfShape MamfBenchmark::shape_at(const Lattice& p) const {
  MamfShape s;
  s.device = run_.device;
  s.dtype = to_string(cfg_.dtype);
  s.m = cfg_.ms[std::get<0>(p)], s.n = cfg_.ns[std::get<1>(p)], s.k = cfg_.ks[std::get<2>(p)];
  if (!cfg_.listed.empty()) s.listed = cfg_.listed[std::get<0>(p)];
  return s;
}

std::vector<MamfBenchmark::Lattice> MamfBenchmark::best(size_t count) const {
  std::vector<std::pair<double, Lattice>> v;
  for (const auto& [p, t] : seen_) v.emplace_back(t, p);
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Lattice> out;
  for (size_t i = 0; i < v.size() && i < count; ++i) out.push_back(v[i].second);
  return out;
}

bool MamfBenchmark::plan_search_step() {
  if (!cfg_.search || finalists_queued_) return false;
  // Climb from the best three to their grid neighbours until the best three are all explored.
  while (true) {
    bool expanded_any = false;
    for (const Lattice& p : best(3)) {
      if (!expanded_.insert(p).second) continue;
      expanded_any = true;
      const auto [i, j, l] = p;
      for (int di = -1; di <= 1; ++di)
        for (int dj = -1; dj <= 1; ++dj)
          for (int dl = -1; dl <= 1; ++dl) {
            const long ni = static_cast<long>(i) + di, nj = static_cast<long>(j) + dj, nl = static_cast<long>(l) + dl;
            if (ni < 0 || nj < 0 || nl < 0 || ni >= static_cast<long>(cfg_.ms.size()) ||
                nj >= static_cast<long>(cfg_.ns.size()) || nl >= static_cast<long>(cfg_.ks.size())) {
              continue;
            }
            const Lattice q{static_cast<size_t>(ni), static_cast<size_t>(nj), static_cast<size_t>(nl)};
            if (!seen_.contains(q)) queue_.push_back({q, true});
          }
    }
    if (!queue_.empty()) return true;
    if (!expanded_any) break;  // converged
  }
  // The three best, timed in full.
  finalists_queued_ = true;
  for (const Lattice& p : best(3)) queue_.insert(queue_.begin(), {p, false});
  return !queue_.empty();
}

bool MamfBenchmark::next() {
  while (true) {
    if (queue_.empty() && !plan_search_step()) return false;
    current_ = queue_.back();
    queue_.pop_back();
    if (!current_.quick) return true;
    const bool over_budget = cfg_.search_budget_s > 0 &&
                             std::chrono::duration<double>(Clock::now() - start_).count() > cfg_.search_budget_s;
    if (!seen_.contains(current_.at) && !over_budget) return true;
  }
}

std::string MamfBenchmark::label() const {
  const MamfShape s = shape_at(current_.at);
  return fmt::format("{}{}", current_.quick ? "search: " : "", s.shape());
}

std::unique_ptr<Point> MamfBenchmark::prepare(cudaStream_t stream) {
  MamfShape s = shape_at(current_.at);
  s.quick = current_.quick;
  if (auto why = gpu::gemm_shape_problem(cfg_.dtype, {s.m, s.n, s.k})) throw WorkError(*why);
  return std::make_unique<MamfPoint>(*this, std::move(s), stream);
}

std::string MamfBenchmark::failed(const WorkError& error, bool) {
  MamfShape s = shape_at(current_.at);
  s.quick = current_.quick;
  s.error = error.what();
  run_.emit(s);
  measured(s);
  return s.quick ? "" : progress_line(s);
}

void MamfBenchmark::measured(const MamfShape& s) {
  if (s.quick) {
    seen_[current_.at] = s.ok ? s.median_tflops : 0.0;
  } else {
    outcome_.shapes.push_back(s);
  }
}

std::string MamfBenchmark::progress_line(const MamfShape& s) {
  ++index_;
  if (!s.ok) return fmt::format("{:6} | {} failed: {}", index_, s.shape(), s.error);
  const auto b = outcome_.best(MamfOutcome::By::median);
  return fmt::format("{:6} | {:6.1f}(mean) {:6.1f}(median) {:6.1f}(max) @ {:<18} | best: {:.1f} @ {}", index_,
                     s.mean_tflops, s.median_tflops, s.max_tflops, s.shape(), b ? b->median_tflops : 0.0,
                     b ? b->shape() : "-");
}

void MamfBenchmark::warm_up(Point&, cudaStream_t stream) {
  if (timing().warmup_s > 0) {
    run_.say(fmt::format("GPU {} ({}): warming up for {:.0f} s", run_.device, run_.device_name, timing().warmup_s));
    const gpu::GemmShape largest{cfg_.ms.back(), cfg_.ns.back(), cfg_.ks.back()};
    if (!gpu::gemm_shape_problem(cfg_.dtype, largest)) {
      gpu::GemmOperands ops(cfg_.dtype, largest, cfg_.seed, stream);
      gpu::GemmPlan plan(*lt_, ops, workspace_->bytes(), 1);
      gpu::warm_up(stream, [&](cudaStream_t s) { plan.run(0, ops, *workspace_, s); }, timing().warmup_s);
    }
  }
  start_ = Clock::now();  // elapsed and the search budget count from here
}

void MamfBenchmark::finish() {
  outcome_.shapes_screened = static_cast<int>(seen_.size());
  outcome_.elapsed_s = std::chrono::duration<double>(Clock::now() - start_).count();
  outcome_.interrupted = run_.stop_requested();
  run_.emit(outcome_.summary(run_.device));
}

}  // namespace ub::measure
