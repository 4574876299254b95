// The shape model of matrix products; see gemm_model.hpp and docs/predict.md.
#include "analysis/predict/gemm_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/units.hpp"

namespace ub {

namespace {

// The relative half-width a ceiling carries: our own run on the GPU (two H200s of one node
// differed by 5% in MAMF: a measurement stands for its GPU model within a few percent), a
// published figure measured elsewhere on other software.
constexpr double kMeasuredSpread = 0.03, kPublishedSpread = 0.05;
// The output tile one SM computes in cuBLAS's large bf16 kernels (Hopper's 128x256 warpgroup
// tiles; Blackwell's 256x256 two-SM tiles are the same per SM).
constexpr int64_t kTileM = 128, kTileN = 256;
constexpr double kBytesPerElement = 2;  // bf16

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The family a library's maturity is shared in: the architecture's first word ("Blackwell Ultra"
// is Blackwell: B200, GB200 and B300 run one cuBLAS generation).
std::string family_of(const Accelerator& g) { return g.architecture.substr(0, g.architecture.find(' ')); }

std::optional<double> efficiency_of(const Accelerator& g, Dtype d, std::optional<double> mamf) {
  if (!mamf) mamf = g.published_mamf(d);
  if (!mamf || !g.peak(d).known()) return std::nullopt;
  return *mamf / g.peak(d).value;
}

}  // namespace

std::vector<double> published_efficiencies(const Catalog& cat, const std::string& vendor, Dtype d,
                                           const std::string& family) {
  std::vector<double> out;
  for (const Accelerator& a : cat.all()) {
    if (a.vendor != vendor || (!family.empty() && family_of(a) != family)) continue;
    if (const auto e = efficiency_of(a, d, std::nullopt)) out.push_back(*e);
  }
  return out;
}

std::optional<ComputeCeiling> compute_ceiling(const Accelerator& g, Dtype d, std::optional<double> measured_mamf,
                                              const Catalog* cat, const Accelerator& other,
                                              std::optional<double> other_mamf) {
  const std::optional<double> peak = g.peak(d).get();
  ComputeCeiling c;
  const auto with_spread = [&](double tflops, double spread) {
    c.tflops = tflops, c.low = tflops * (1 - spread), c.high = tflops * (1 + spread);
    c.efficiency = peak ? tflops / *peak : 0;
  };
  if (measured_mamf) {
    with_spread(*measured_mamf, kMeasuredSpread);
    c.measured = true;
    c.source = fmt::format("MAMF measured on the {} {:.1f} TFLOPS", g.id, *measured_mamf);
    return c;
  }
  if (const auto published = g.published_mamf(d)) {
    with_spread(*published, kPublishedSpread);
    c.published = true;
    c.source = fmt::format("the {}'s published MAMF {:.1f} TFLOPS", g.id, *published);
    return c;
  }
  if (!peak) return std::nullopt;
  // No MAMF of this GPU: its peak at the efficiency its library reaches on sibling parts (the
  // library's maturity on that architecture), else at the other GPU's; the interval spans every
  // efficiency the vendor's parts publish.
  const std::vector<double> vendor = cat ? published_efficiencies(*cat, g.vendor, d) : std::vector<double>{};
  std::vector<double> family = cat ? published_efficiencies(*cat, g.vendor, d, family_of(g)) : std::vector<double>{};
  std::optional<double> point;
  std::string why;
  if (!family.empty()) {
    point = median(family);
    why = fmt::format("the median MAMF efficiency published for {} parts ({} of them)", family_of(g), family.size());
  } else if (const auto e = efficiency_of(other, d, other_mamf)) {
    point = *e;
    why = fmt::format("the {}'s MAMF efficiency (none published for {} parts)", other.id, family_of(g));
  }
  if (!point) return std::nullopt;
  c.tflops = *peak * *point, c.efficiency = *point;
  const double lo = vendor.empty() ? *point * (1 - kPublishedSpread) : std::min(*point, *std::min_element(vendor.begin(), vendor.end()));
  const double hi = vendor.empty() ? *point * (1 + kPublishedSpread) : std::max(*point, *std::max_element(vendor.begin(), vendor.end()));
  c.low = *peak * lo, c.high = *peak * hi;
  c.source = fmt::format("the {}'s {} peak {:.0f} at {:.1f}%: {} ({:.1f}-{:.1f}% across {}'s published MAMF)", g.id,
                         to_string(d), *peak, 100 * *point, why, 100 * lo, 100 * hi, g.vendor);
  return c;
}

double wave_efficiency(int64_t m, int64_t n, std::optional<int64_t> sms) {
  if (!sms || *sms <= 0 || m <= 0 || n <= 0) return 1;
  const int64_t tiles = ((m + kTileM - 1) / kTileM) * ((n + kTileN - 1) / kTileN);
  const int64_t waves = (tiles + *sms - 1) / *sms;
  return static_cast<double>(tiles) / static_cast<double>(waves * *sms);
}

namespace {

// What one call reads and writes: A, B and D once each.
double gemm_bytes(const StepGemm& g) { return kBytesPerElement * static_cast<double>(g.m * g.k + g.k * g.n + g.m * g.n); }

}  // namespace

double modelled_ms(const StepGemm& g, const GemmGpu& gpu, bool wave) {
  const double w = wave ? wave_efficiency(g.m, g.n, gpu.sms) : 1.0;
  const double compute_ms = ms_at(g.flop(), gpu.compute_tflops * w);
  const double memory_ms = gemm_bytes(g) / (gpu.hbm_tbps * 1e12) * 1e3;
  return std::max(compute_ms, memory_ms);
}

namespace {

std::optional<double> timed_ms(const StepGemm& g, const GemmGpu& gpu) {
  for (const ShapeTime& t : gpu.timed) {
    if (t.m == g.m && t.n == g.n && t.k == g.k && t.ms > 0) return t.ms;
  }
  return std::nullopt;
}

}  // namespace

GemmMix gemm_mix(const std::vector<StepGemm>& gemms, const GemmGpu& old_gpu, const GemmGpu& new_gpu) {
  GemmMix mix;
  const double ridge = old_gpu.compute_tflops / old_gpu.hbm_tbps;  // FLOP per byte
  double below_ridge_ms = 0;
  for (const StepGemm& g : gemms) {
    if (g.count <= 0) continue;
    const double count = static_cast<double>(g.count);
    const double model_old = modelled_ms(g, old_gpu), model_new = modelled_ms(g, new_gpu);
    const std::optional<double> old_timed = timed_ms(g, old_gpu), new_timed = timed_ms(g, new_gpu);
    // A shape timed on the old GPU only keeps the model's ratio between the two GPUs.
    const double old_ms = old_timed.value_or(model_old);
    const double new_ms = new_timed ? *new_timed : old_ms * model_new / model_old;
    mix.old_ms += count * old_ms, mix.new_ms += count * new_ms, mix.old_tflop += count * g.flop() / 1e12;
    if (g.flop() / gemm_bytes(g) < ridge) below_ridge_ms += count * old_ms;
    ++mix.shapes;
    if (old_timed) ++mix.timed_old;
    if (old_timed && new_timed) ++mix.timed_both;
  }
  mix.ridge_share = mix.old_ms > 0 ? below_ridge_ms / mix.old_ms : 0;
  return mix;
}

}  // namespace ub
