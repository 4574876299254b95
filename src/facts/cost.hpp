// Money and time per measured step, written once here.
//
//   tokens per GPU per second = batch * seqlen / step seconds      (each GPU runs its micro-batch)
//   USD per million tokens    = price (USD per GPU-hour) / 3600 / tokens per GPU per second * 1e6
//   USD per step (per GPU)    = price / 3600 * step seconds
//   break-even speedup        = price(new) / price(old): above it the new GPU costs less per token
//   hours to train T tokens on G GPUs = T / (tokens per GPU per second * G) / 3600
//
// Energy, for a team that owns its GPUs and pays for power rather than GPU-hours:
//   tokens per joule          = batch * seqlen / joules per step (per GPU)
//   electricity USD per million tokens = 1e6 / tokens per joule / 3.6e6 J/kWh * USD/kWh * PUE
//   (PUE: the facility's power over the IT equipment's; 1.0 counts the GPU alone)
#pragma once

#include <cstdint>

namespace ub {

double tokens_per_gpu_second(int64_t batch, int64_t seqlen, double step_ms);
double usd_per_million_tokens(double usd_per_gpu_hour, double tokens_per_gpu_s);
double usd_per_step(double usd_per_gpu_hour, double step_ms);
double break_even_speedup(double usd_per_gpu_hour_old, double usd_per_gpu_hour_new);
double hours_to_train(double tokens, int64_t gpus, double tokens_per_gpu_s);
double tokens_per_joule(int64_t batch, int64_t seqlen, double joules_per_step);
double energy_usd_per_million_tokens(double tokens_per_joule, double usd_per_kwh, double pue);

}  // namespace ub
