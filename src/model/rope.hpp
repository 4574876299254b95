// Rotary position embeddings as Hugging Face's Llama computes them: the inverse frequencies
// theta^(-2i/d) for i < d/2, adjusted by the config's rope_scaling ("llama3": low frequencies
// divided by `factor`, high ones kept, a smooth blend between; "linear": all divided by
// `factor`), and the cos / sin table per position.
//
//   llama3: wavelen = 2 pi / f;  low = orig / low_freq_factor;  high = orig / high_freq_factor
//     wavelen > low: f / factor;  wavelen < high: f;  else (1 - a) f / factor + a f,
//     a = (orig / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
#pragma once

#include <cstdint>
#include <vector>

#include "facts/model_shape.hpp"

namespace ub {

// d/2 inverse frequencies. Throws UsageError for a rope_scaling type we do not implement.
std::vector<double> rope_inverse_frequencies(const ModelShape& m);

// cos and sin of position * frequency, [seqlen][head_dim / 2] row-major, in float as the GPU
// uses them (positions restart at 0 in every sequence of the batch).
struct RopeTable {
  int64_t seqlen = 0, half = 0;
  std::vector<float> cos, sin;
};
RopeTable rope_table(const ModelShape& m, int64_t seqlen);

}  // namespace ub
