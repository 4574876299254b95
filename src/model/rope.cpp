// Rotary frequencies and tables; see rope.hpp.
#include "model/rope.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "base/error.hpp"

namespace ub {

std::vector<double> rope_inverse_frequencies(const ModelShape& m) {
  const int64_t half = m.head_dim / 2;
  std::vector<double> f(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    f[static_cast<size_t>(i)] = 1.0 / std::pow(m.rope_theta, static_cast<double>(2 * i) / static_cast<double>(m.head_dim));
  }
  if (!m.rope_scaling || m.rope_scaling->type == "default") return f;
  const RopeScaling& s = *m.rope_scaling;
  if (s.type == "linear") {
    for (double& x : f) x /= s.factor;
    return f;
  }
  if (s.type != "llama3") {
    throw UsageError(fmt::format("{}: rope_scaling type \"{}\" is not supported by the training engine "
                                 "(default, linear, llama3)", m.id, s.type));
  }
  const double orig = static_cast<double>(s.original_max_position);
  const double low_wavelen = orig / s.low_freq_factor, high_wavelen = orig / s.high_freq_factor;
  for (double& x : f) {
    const double wavelen = 2 * std::numbers::pi / x;
    if (wavelen > low_wavelen) {
      x /= s.factor;
    } else if (wavelen >= high_wavelen) {
      const double a = (orig / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      x = (1 - a) * x / s.factor + a * x;
    }
  }
  return f;
}

RopeTable rope_table(const ModelShape& m, int64_t seqlen) {
  const std::vector<double> f = rope_inverse_frequencies(m);
  RopeTable t;
  t.seqlen = seqlen;
  t.half = static_cast<int64_t>(f.size());
  t.cos.resize(static_cast<size_t>(seqlen * t.half));
  t.sin.resize(t.cos.size());
  for (int64_t p = 0; p < seqlen; ++p) {
    for (int64_t i = 0; i < t.half; ++i) {
      // Hugging Face forms position * inv_freq in float32; so do we.
      const float angle = static_cast<float>(p) * static_cast<float>(f[static_cast<size_t>(i)]);
      t.cos[static_cast<size_t>(p * t.half + i)] = std::cos(angle);
      t.sin[static_cast<size_t>(p * t.half + i)] = std::sin(angle);
    }
  }
  return t;
}

}  // namespace ub
