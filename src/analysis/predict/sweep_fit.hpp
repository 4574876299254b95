// A training log of several sequence lengths decomposes itself. Its dense work (GEMMs, norms,
// activations, the loss) grows with the tokens, its causal attention with their square, and what
// a step spends apart from both (an optimizer stepped on the host, parameters gathered, launch and
// host time) does not grow at all:
//
//   step(s) = U + dense FLOPs(s) / R_dense + attention FLOPs(s) / R_attention
//
// Three unknowns, one equation per length: least squares over three lengths or more, each
// equation divided by its step so that 8k counts as much as 256k. What comes out is the log's own
// split: U, the time no kernel's work explains, which a faster GPU does not shorten, and the rates
// at which the old GPU ran the dense and the attention work. On the ml-engineering guide's H200
// sweep (ZeRO-3 with an offloaded optimizer, 8k to 256k) it finds about 2.4 s a step of U, which is
// why its 8k step sped up 1.18x on the B200 and not 1.7x.
//
// A U that comes out negative (a step with nothing off the GPU, and noise) is held at 0 and the two
// rates fitted alone. The fit is refused (and the log split by its FLOP shares instead) when it is
// not physical: a rate that is not positive or beyond the GPU's peak, or fewer than three lengths.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/units.hpp"

namespace ub {

struct SweepPoint {
  int64_t seqlen = 0;
  double step_ms = 0;
  double dense_tflop = 0, attention_tflop = 0;  // model FLOPs (the MFU convention) of one step
};

struct SweepFit {
  double per_step_ms = 0;                        // U
  double dense_tflops = 0, attention_tflops = 0;  // R_dense, R_attention (model FLOPs per second)
  double worst_residual = 0;                      // the largest |fitted - measured| / measured
  int points = 0;
  double dense_ms(const SweepPoint& p) const { return ms_at(p.dense_tflop * 1e12, dense_tflops); }
  double attention_ms(const SweepPoint& p) const { return ms_at(p.attention_tflop * 1e12, attention_tflops); }
};

// The fit, or nullopt with `why_not` said. `peak_tflops` bounds the rates (model FLOPs cannot run
// faster than the peak); 0 when unknown.
std::optional<SweepFit> fit_sweep(const std::vector<SweepPoint>& points, double peak_tflops, std::string& why_not);

}  // namespace ub
