// MAMF outcome summaries; see mamf_result.hpp.
#include "records/mamf_result.hpp"

#include <fmt/format.h>

#include <cmath>

#include "base/units.hpp"

namespace ub {

double tflops_by(const MamfShape& s, MamfOutcome::By by) {
  switch (by) {
    case MamfOutcome::By::mean: return s.mean_tflops;
    case MamfOutcome::By::median: return s.median_tflops;
    case MamfOutcome::By::max: return s.max_tflops;
  }
  return 0;
}

std::optional<MamfShape> MamfOutcome::best(By by) const {
  std::optional<MamfShape> b;
  for (const MamfShape& s : shapes) {
    if (s.ok && (!b || tflops_by(s, by) > tflops_by(*b, by))) b = s;
  }
  return b;
}

std::optional<double> MamfOutcome::arithmetic_mean(By by) const {
  double sum = 0;
  int n = 0;
  for (const MamfShape& s : shapes) {
    if (s.ok) {
      sum += tflops_by(s, by);
      ++n;
    }
  }
  return n ? std::optional<double>(sum / n) : std::nullopt;
}

std::optional<double> MamfOutcome::geometric_mean(By by) const {
  double log_sum = 0;
  int n = 0;
  for (const MamfShape& s : shapes) {
    if (s.ok && tflops_by(s, by) > 0) {
      log_sum += std::log(tflops_by(s, by));
      ++n;
    }
  }
  return n ? std::optional<double>(std::exp(log_sum / n)) : std::nullopt;
}

std::string MamfOutcome::footer() const {
  int ok = 0;
  for (const MamfShape& s : shapes) ok += s.ok;
  std::string out = fmt::format("Tried {} shapes => the best outcomes were:\n", ok);
  const std::pair<By, const char*> rows[] = {{By::mean, "mean:  "}, {By::median, "median:"},
                                             {By::max, "max:   "}};
  for (const auto& [by, name] : rows) {
    if (auto b = best(by)) {
      out += fmt::format("{} {:.1f} TFLOPS @ {} (MxNxK)\n", name, tflops_by(*b, by), b->shape());
    }
  }
  if (interrupted) out += "(interrupted: the best of the shapes measured so far)\n";
  return out;
}

std::optional<double> MamfOutcome::step_tflops() const {
  double flop = 0, ms = 0;
  for (const MamfShape& x : shapes) {
    if (!x.listed) continue;
    if (!x.ok || !(x.median_tflops > 0)) return std::nullopt;  // a product of the step not measured
    const double f = x.flops() * static_cast<double>(x.listed->count);
    flop += f;
    ms += f / x.median_tflops / 1e9;  // TFLOPS = flop / 1e12 / (ms / 1e3)
  }
  if (!(ms > 0)) return std::nullopt;
  return tflops_from(flop, ms);
}

MamfSummary MamfOutcome::summary(int device) const {
  auto best_of = [&](By by) -> std::optional<MamfBest> {
    const auto b = best(by);
    if (!b) return std::nullopt;
    return MamfBest{tflops_by(*b, by), b->shape(), b->device};
  };
  MamfSummary s;
  s.device = device;
  for (const MamfShape& x : shapes) s.shapes += x.ok;
  s.shapes_failed = static_cast<int>(shapes.size()) - s.shapes;
  s.shapes_screened = shapes_screened;
  s.best_mean = best_of(By::mean);
  s.best_median = best_of(By::median);
  s.best_max = best_of(By::max);
  s.arithmetic_of_means = arithmetic_mean(By::mean);
  s.arithmetic_of_medians = arithmetic_mean(By::median);
  s.geometric_of_means = geometric_mean(By::mean);
  s.geometric_of_medians = geometric_mean(By::median);
  s.step_tflops = step_tflops();
  s.elapsed_s = elapsed_s;
  s.interrupted = interrupted;
  return s;
}

}  // namespace ub
