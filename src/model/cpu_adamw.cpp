// AdamW on host threads; see cpu_adamw.hpp.
#include "model/cpu_adamw.hpp"

#include <cstring>

namespace ub {

uint16_t bf16_bits(float x) {
  uint32_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (u >> 16) | 0x40u;
  return static_cast<uint16_t>((u & 0x7FFFFFFFu) > 0x7F800000u ? quiet_nan : rounded);  // a select: vectorises
}

float bf16_value(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float x = 0;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=haswell", "default")))
#endif
void cpu_adamw(float* __restrict master, float* __restrict m, float* __restrict v, const float* __restrict g,
               uint16_t* __restrict w16, size_t n, const AdamWScalars& k, float clip) {
  const float lr = k.lr, b1 = k.beta1, b2 = k.beta2, eps = k.eps, wd = k.wd, bias1 = k.bias1, bias2 = k.bias2;
  for (size_t i = 0; i < n; ++i) {
    float p = master[i], mi = m[i], vi = v[i];
    adamw_update(p, mi, vi, g[i] * clip, lr, b1, b2, eps, wd, bias1, bias2);
    master[i] = p;
    m[i] = mi;
    v[i] = vi;
    w16[i] = bf16_bits(p);
  }
}

}  // namespace ub
