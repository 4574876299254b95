// MAMF outcome summaries; see mamf_result.hpp.
#include "core/mamf_result.hpp"

#include <fmt/format.h>

#include <cmath>

namespace ub {

std::string MamfShape::shape() const { return fmt::format("{}x{}x{}", m, n, k); }

namespace {
double value(const MamfShape& s, MamfOutcome::By by) {
  switch (by) {
    case MamfOutcome::By::mean: return s.mean_tflops;
    case MamfOutcome::By::median: return s.median_tflops;
    case MamfOutcome::By::max: return s.max_tflops;
  }
  return 0;
}
}  // namespace

std::optional<MamfShape> MamfOutcome::best(By by) const {
  std::optional<MamfShape> b;
  for (const MamfShape& s : shapes) {
    if (s.ok && (!b || value(s, by) > value(*b, by))) b = s;
  }
  return b;
}

std::optional<double> MamfOutcome::arithmetic_mean(By by) const {
  double sum = 0;
  int n = 0;
  for (const MamfShape& s : shapes) {
    if (s.ok) {
      sum += value(s, by);
      ++n;
    }
  }
  return n ? std::optional<double>(sum / n) : std::nullopt;
}

std::optional<double> MamfOutcome::geometric_mean(By by) const {
  double log_sum = 0;
  int n = 0;
  for (const MamfShape& s : shapes) {
    if (s.ok && value(s, by) > 0) {
      log_sum += std::log(value(s, by));
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
      out += fmt::format("{} {:.1f} TFLOPS @ {} (MxNxK)\n", name, value(*b, by), b->shape());
    }
  }
  if (interrupted) out += "(interrupted: the best of the shapes measured so far)\n";
  return out;
}

nlohmann::json MamfOutcome::summary_json() const {
  using nlohmann::json;
  auto best_json = [&](By by) {
    const auto b = best(by);
    return b ? json{{"tflops", value(*b, by)}, {"shape", b->shape()}, {"device", b->device}}
             : json();
  };
  auto opt = [](std::optional<double> v) { return v ? json(*v) : json(); };
  int ok = 0;
  for (const MamfShape& s : shapes) ok += s.ok;
  return {{"type", "mamf_summary"},
          {"shapes", ok},
          {"shapes_failed", static_cast<int>(shapes.size()) - ok},
          {"shapes_screened", shapes_screened},
          {"best", {{"mean", best_json(By::mean)}, {"median", best_json(By::median)},
                    {"max", best_json(By::max)}}},
          {"arithmetic_mean_tflops", {{"mean", opt(arithmetic_mean(By::mean))},
                                      {"median", opt(arithmetic_mean(By::median))}}},
          {"geometric_mean_tflops", {{"mean", opt(geometric_mean(By::mean))},
                                     {"median", opt(geometric_mean(By::median))}}},
          {"elapsed_s", elapsed_s},
          {"interrupted", interrupted}};
}

}  // namespace ub
