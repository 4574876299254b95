// AdamW on the CPU, for --offload-optimizer (DeepSpeed's CPU Adam): the fp32 master weights and
// both moments live in host memory, the update runs on host threads over a slice of the shard at
// a time and writes the bf16 weights the GPU reads back. The formula is train_math.hpp's
// adamw_update, the one the GPU kernel runs, in float as there; the loop is written so the
// compiler vectorises it (built for AVX2 and for the baseline, picked at run time).
#pragma once

#include <cstddef>
#include <cstdint>

#include "model/train_math.hpp"

namespace ub {

// bf16 of x, rounded to nearest even (NaN stays NaN): the bits PyTorch and CUDA's
// __float2bfloat16 give.
uint16_t bf16_bits(float x);
float bf16_value(uint16_t bits);

// One AdamW step over n elements: g (fp32) scaled by `clip` (the clip coefficient of the global
// norm), master, m and v updated in place, w16 = bf16(master).
void cpu_adamw(float* master, float* m, float* v, const float* g, uint16_t* w16, size_t n, const AdamWScalars& k,
               float clip);

}  // namespace ub
