// Cost and time formulas; stated in cost.hpp.
#include "facts/cost.hpp"

namespace ub {

double tokens_per_gpu_second(int64_t batch, int64_t seqlen, double step_ms) {
  return static_cast<double>(batch) * static_cast<double>(seqlen) / (step_ms / 1e3);
}

double usd_per_million_tokens(double price, double tokens_per_gpu_s) {
  return price / 3600.0 / tokens_per_gpu_s * 1e6;
}

double usd_per_step(double price, double step_ms) { return price / 3600.0 * (step_ms / 1e3); }

double break_even_speedup(double price_old, double price_new) { return price_new / price_old; }

double hours_to_train(double tokens, int64_t gpus, double tokens_per_gpu_s) {
  return tokens / (tokens_per_gpu_s * static_cast<double>(gpus)) / 3600.0;
}

double tokens_per_joule(int64_t batch, int64_t seqlen, double joules_per_step) {
  return static_cast<double>(batch) * static_cast<double>(seqlen) / joules_per_step;
}

double energy_usd_per_million_tokens(double tokens_per_joule, double usd_per_kwh, double pue) {
  return 1e6 / tokens_per_joule / 3.6e6 * usd_per_kwh * pue;
}

}  // namespace ub
