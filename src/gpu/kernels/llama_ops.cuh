// The training engine's own kernels (everything that is not a GEMM or attention), forward and
// backward, as host launchers. bf16 tensors are passed as void*, row-major, [tokens, ...]; the
// formulas are core/train/train_math.hpp's and core/reference/llama_cpu.hpp's (the reference each
// kernel is tested against).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/train/train_math.hpp"

namespace ub::gpu {

// x[t] = table[tokens[t]]                                            (bf16 [T, H])
void embedding_forward(const int32_t* tokens, const void* table, void* x, int64_t T, int64_t H, cudaStream_t s);
// Positions grouped by token: those holding token v are order[starts[v] .. starts[v + 1]).
struct TokenIndex {
  std::vector<int32_t> order, starts;  // T and V + 1 entries
};
// Throws WorkError for an id outside [0, V).
TokenIndex index_tokens(const std::vector<int32_t>& tokens, int64_t V);
// dtable[v] = (accumulate ? dtable[v] : 0) + sum of dx[t] over positions t holding v, for every
// row v of [V, H] (fp32 sums; dtable fp32, or bf16 when bf16_grad). order / starts: index_tokens's,
// on the device.
void embedding_backward(const int32_t* order, const int32_t* starts, const void* dx, void* dtable, bool bf16_grad,
                        bool accumulate, int64_t V, int64_t H, cudaStream_t s);

// y = w * x * rstd, rstd = 1 / sqrt(mean(x^2) + eps) per row (kept for backward).
void rmsnorm_forward(const void* x, const void* w, void* y, float* rstd, int64_t T, int64_t H, double eps,
                     cudaStream_t s);
// dx = residual_grad + rmsnorm'(dy) (residual_grad may be null, and may equal dx); dw += sum dy xhat.
void rmsnorm_backward(const void* dy, const void* x, const void* w, const float* rstd, const void* residual_grad,
                      void* dx, float* dw, int64_t T, int64_t H, cudaStream_t s);

// qkv [T, (nq + 2 nk) d] -> q [T, nq, d], k [T, nk, d] rotated, v [T, nk, d]; position = t % S;
// cos, sin [S, d/2] fp32.
void rope_forward(const void* qkv, const float* cos, const float* sin, void* q, void* k, void* v, int64_t T,
                  int64_t S, int64_t nq, int64_t nk, int64_t d, cudaStream_t s);
// The transpose: dq, dk, dv -> dqkv.
void rope_backward(const void* dq, const void* dk, const void* dv, const float* cos, const float* sin, void* dqkv,
                   int64_t T, int64_t S, int64_t nq, int64_t nk, int64_t d, cudaStream_t s);

// gu [T, 2I] (gate | up) -> h [T, I] = silu(gate) * up; and backward dh -> dgu.
void swiglu_forward(const void* gu, void* h, int64_t T, int64_t I, cudaStream_t s);
void swiglu_backward(const void* dh, const void* gu, void* dgu, int64_t T, int64_t I, cudaStream_t s);

// Cross-entropy over next-token labels for rows [first, first + rows) of the batch (label of
// row t is tokens[t + 1] within its sequence of S; the last row of each sequence predicts
// nothing). Overwrites logits [rows, V] (the chunk's) with d loss / d logits, the loss being the
// sum of row losses / `count` (the number of predicted rows in the whole batch), and writes each
// row's loss to row_loss[t].
void cross_entropy_forward_backward(void* logits, const int32_t* tokens, float* row_loss, int64_t first, int64_t rows,
                                    int64_t S, int64_t V, double count, cudaStream_t s);
// *loss = sum(row_loss) / count, in double.
void sum_loss(const float* row_loss, int64_t T, double count, double* loss, cudaStream_t s);

// Parameter initialisation of elements [offset, offset + count) of the flat buffer: normal(0,
// stddev) from counter_rng (or 1 when `ones`) into master (fp32, may be null) and w16 (bf16).
void init_parameters(float* master, void* w16, size_t offset, size_t count, uint64_t seed, float stddev, bool ones,
                     cudaStream_t s);
// w16 = bf16(master) over n elements.
void cast_to_bf16(const float* master, void* w16, size_t n, cudaStream_t s);
// *norm_sq += sum g^2 (double atomics; clear it first); g fp32, or bf16 when bf16_grads.
void accumulate_squares(const void* g, bool bf16_grads, size_t n, double* norm_sq, cudaStream_t s);
// Clip by the global norm sqrt(*norm_sq), then AdamW at step `step` (1-based) over n elements.
// With master weights: master fp32, m and v fp32, w16 = bf16(master). Without (pure bf16):
// master null, m and v bf16, w16 updated in place. Gradients g fp32, or bf16 when bf16_grads.
void adamw_step(float* master, void* w16, const void* g, bool bf16_grads, void* m, void* v, bool bf16_state, size_t n,
                const double* norm_sq, const AdamWParams& p, int64_t step, cudaStream_t s);

}  // namespace ub::gpu
