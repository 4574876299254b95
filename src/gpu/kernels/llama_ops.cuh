// The training engine's own kernels (everything that is not a GEMM or attention), forward and
// backward, as host launchers. Tensors are typed views (gpu/tensor_view.hpp), row-major,
// [tokens, ...]; the formulas are model/train_math.hpp's and model/reference/llama_cpu.hpp's
// (the reference each kernel is tested against).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu/tensor_view.hpp"
#include "model/train_math.hpp"

namespace ub::gpu {

// x[t] = table[tokens[t]]                                            (bf16 [T, H])
void embedding_forward(const int32_t* tokens, const bf16* table, bf16* x, int64_t T, int64_t H, cudaStream_t s);
// Positions grouped by token: those holding token v are order[starts[v] .. starts[v + 1]).
struct TokenIndex {
  std::vector<int32_t> order, starts;  // T and V + 1 entries
};
// Throws WorkError for an id outside [0, V).
TokenIndex index_tokens(const std::vector<int32_t>& tokens, int64_t V);
// dtable[v] = (accumulate ? dtable[v] : 0) + sum of dx[t] over positions t holding v, for every
// row v of [V, H] (fp32 sums; dtable fp32 or bf16). order / starts: index_tokens's, on the device.
void embedding_backward(const int32_t* order, const int32_t* starts, const bf16* dx, Fp32OrBf16 dtable, bool accumulate,
                        int64_t V, int64_t H, cudaStream_t s);

// y = w * x * rstd, rstd = 1 / sqrt(mean(x^2) + eps) per row (kept for backward).
void rmsnorm_forward(const bf16* x, const bf16* w, bf16* y, float* rstd, int64_t T, int64_t H, double eps,
                     cudaStream_t s);
// dx = residual_grad + rmsnorm'(dy) (residual_grad may be null, and may equal dx); dw += sum dy xhat.
void rmsnorm_backward(const bf16* dy, const bf16* x, const bf16* w, const float* rstd, const bf16* residual_grad,
                      bf16* dx, float* dw, int64_t T, int64_t H, cudaStream_t s);

// QK-norm, in place: each query and key head of qkv [T, (nq + 2 nk) d] becomes w * x * rstd over
// its d (q_w [d] for queries, k_w [d] for keys), the heads before it copied to raw [T, nq + nk, d]
// and their rstd to rstd [T, nq + nk]; values untouched. d: a multiple of 8 up to 256.
void qk_norm_forward(bf16* qkv, const bf16* q_w, const bf16* k_w, bf16* raw, float* rstd, int64_t T, int64_t nq,
                     int64_t nk, int64_t d, double eps, cudaStream_t s);
// Its backward, in place: dqkv's query and key heads (the gradient of the normalised heads) become
// the gradient of the heads before it; dq_w, dk_w += sum dy xhat (fp32).
void qk_norm_backward(bf16* dqkv, const bf16* raw, const bf16* q_w, const bf16* k_w, const float* rstd, float* dq_w,
                      float* dk_w, int64_t T, int64_t nq, int64_t nk, int64_t d, cudaStream_t s);

// qkv [T, (nq + 2 nk) d] -> q [T, nq, d], k [T, nk, d] rotated, v [T, nk, d]; position = t % S;
// cos, sin [S, d/2] fp32.
void rope_forward(const bf16* qkv, const float* cos, const float* sin, bf16* q, bf16* k, bf16* v, int64_t T,
                  int64_t S, int64_t nq, int64_t nk, int64_t d, cudaStream_t s);
// The transpose: dq, dk, dv -> dqkv.
void rope_backward(const bf16* dq, const bf16* dk, const bf16* dv, const float* cos, const float* sin, bf16* dqkv,
                   int64_t T, int64_t S, int64_t nq, int64_t nk, int64_t d, cudaStream_t s);

// gu [T, 2I] (gate | up) -> h [T, I] = silu(gate) * up; and backward dh -> dgu.
void swiglu_forward(const bf16* gu, bf16* h, int64_t T, int64_t I, cudaStream_t s);
void swiglu_backward(const bf16* dh, const bf16* gu, bf16* dgu, int64_t T, int64_t I, cudaStream_t s);

// Cross-entropy over next-token labels for rows [first, first + rows) of the batch (label of
// row t is tokens[t + 1] within its sequence of S; the last row of each sequence predicts
// nothing). Overwrites logits [rows, V] (the chunk's) with d loss / d logits, the loss being the
// sum of row losses / `count` (the number of predicted rows in the whole batch), and writes each
// row's loss to row_loss[t].
void cross_entropy_forward_backward(bf16* logits, const int32_t* tokens, float* row_loss, int64_t first, int64_t rows,
                                    int64_t S, int64_t V, double count, cudaStream_t s);
// *loss = sum(row_loss) / count, in double.
void sum_loss(const float* row_loss, int64_t T, double count, double* loss, cudaStream_t s);

// Parameter initialisation of `count` elements whose initial-value indices start at `index`
// (ParamTensor::init_index): normal(0, stddev) from counter_rng (or 1 when `ones`) into master
// (fp32) and w16 (bf16), each pointing at the first element and either null.
void init_parameters(float* master, bf16* w16, size_t count, uint64_t index, uint64_t seed, float stddev, bool ones,
                     cudaStream_t s);
// w16 = bf16(master) over n elements.
void cast_to_bf16(const float* master, bf16* w16, size_t n, cudaStream_t s);
// *norm_sq += sum g^2 (double atomics; clear it first).
void accumulate_squares(ConstFp32OrBf16 g, size_t n, double* norm_sq, cudaStream_t s);
// Clip by the global norm sqrt(*norm_sq), then AdamW at step `step` (1-based) over n elements.
// With master weights: master fp32, m and v fp32, w16 = bf16(master). Without (pure bf16):
// master null, m and v bf16, w16 updated in place. Gradients fp32 or bf16.
void adamw_step(float* master, bf16* w16, ConstFp32OrBf16 g, Fp32OrBf16 m, Fp32OrBf16 v, size_t n,
                const double* norm_sq, const AdamWParams& p, int64_t step, cudaStream_t s);

}  // namespace ub::gpu
