// The three-term fit of a training log; see sweep_fit.hpp.
#include "analysis/predict/sweep_fit.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace ub {

namespace {

using Vec3 = std::array<double, 3>;

// Solves A x = b for a 3x3 system by Gaussian elimination with partial pivoting; nullopt when singular.
std::optional<Vec3> solve(std::array<Vec3, 3> a, Vec3 b) {
  for (int c = 0; c < 3; ++c) {
    int pivot = c;
    for (int r = c + 1; r < 3; ++r) {
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    }
    if (!(std::abs(a[pivot][c]) > 1e-300)) return std::nullopt;
    std::swap(a[c], a[pivot]);
    std::swap(b[c], b[pivot]);
    for (int r = 0; r < 3; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (int k = 0; k < 3; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  return Vec3{b[0] / a[0][0], b[1] / a[1][1], b[2] / a[2][2]};
}

}  // namespace

std::optional<SweepFit> fit_sweep(const std::vector<SweepPoint>& points, double peak_tflops, std::string& why_not) {
  if (points.size() < 3) {
    why_not = fmt::format("{} length(s) measured, three are needed to tell per-step time from dense and attention work",
                          points.size());
    return std::nullopt;
  }
  // Unknowns x = (U ms, ms per dense TFLOP, ms per attention TFLOP); each equation over its step.
  std::array<Vec3, 3> ata{};
  Vec3 atb{};
  for (const SweepPoint& p : points) {
    if (!(p.step_ms > 0) || !(p.dense_tflop > 0) || !(p.attention_tflop > 0)) {
      why_not = fmt::format("seqlen {}: no positive step time or FLOPs", p.seqlen);
      return std::nullopt;
    }
    const Vec3 row = {1 / p.step_ms, p.dense_tflop / p.step_ms, p.attention_tflop / p.step_ms};
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) ata[i][j] += row[i] * row[j];
      atb[i] += row[i];
    }
  }
  auto x = solve(ata, atb);
  if (x && (*x)[0] < 0) {
    // No time beyond the work (a step with nothing off the GPU), and noise made it negative: the
    // two rates alone, U held at 0 (the first unknown's equation replaced by U = 0).
    ata[0] = {1, 0, 0}, ata[1][0] = ata[2][0] = 0, atb[0] = 0;
    x = solve(ata, atb);
  }
  if (!x) {
    why_not = "the lengths do not separate dense from attention work";
    return std::nullopt;
  }
  const double u = (*x)[0], ms_per_dense = (*x)[1], ms_per_attention = (*x)[2];
  if (u < 0 || !(ms_per_dense > 0) || !(ms_per_attention > 0)) {
    why_not = fmt::format("not physical (per-step {:.1f} ms, {:.3g} and {:.3g} ms per dense and attention TFLOP)", u,
                          ms_per_dense, ms_per_attention);
    return std::nullopt;
  }
  SweepFit fit;
  fit.per_step_ms = u, fit.dense_tflops = 1e3 / ms_per_dense, fit.attention_tflops = 1e3 / ms_per_attention;
  fit.points = static_cast<int>(points.size());
  if (peak_tflops > 0 && (fit.dense_tflops > peak_tflops || fit.attention_tflops > peak_tflops)) {
    why_not = fmt::format("a fitted rate beyond the peak ({:.0f} dense, {:.0f} attention TFLOPS, peak {:.0f})",
                          fit.dense_tflops, fit.attention_tflops, peak_tflops);
    return std::nullopt;
  }
  for (const SweepPoint& p : points) {
    const double fitted = u + fit.dense_ms(p) + fit.attention_ms(p);
    fit.worst_residual = std::max(fit.worst_residual, std::abs(fitted - p.step_ms) / p.step_ms);
  }
  return fit;
}

}  // namespace ub
