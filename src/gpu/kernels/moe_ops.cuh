// The mixture-of-experts layer's own kernels (everything that is not a GEMM), forward and
// backward, as host launchers. The formulas are model/reference/moe_cpu.hpp's, the reference each
// kernel is tested against; the layer that strings them together is gpu/model/moe_layer.hpp.
//
// T tokens, E experts, K experts per token; a slot is (token t, choice i), numbered t*K + i; a
// row is a slot in expert-grouped order (the permutation), rows [offsets[e], offsets[e+1]) being
// expert e's, in token order within an expert (a stable counting sort: the reference's order).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/tensor_view.hpp"

namespace ub::gpu {

// Routing of each token (one warp per token), from the router's bf16 logits [T, E]:
//   probs [T, E] fp32    softmax(logits) (sigmoid when `sigmoid`), the scores
//   chosen [T, K]        the K best experts, best first; chosen by the logits themselves (the
//                        scores are monotonic in them), ties to the lower expert, as the
//                        reference's stable sort
//   weights [T, K] fp32  their scores, divided by their sum when `normalize`
// E is at most kMaxExperts; K at most E.
inline constexpr int64_t kMaxExperts = 512;
void moe_route(const bf16* logits, float* probs, int32_t* chosen, float* weights, int64_t T, int64_t E, int64_t K,
               bool sigmoid, bool normalize, cudaStream_t s);

// The permutation of the T*K slots by expert: counts [E] (rows per expert), offsets [E + 1],
// order [T*K] (the slot of each row) and row_of_slot [T*K] (its inverse). `scratch` holds
// moe_permute_scratch_ints(T*K, E) ints.
int64_t moe_permute_scratch_ints(int64_t slots, int64_t E);
void moe_permute(const int32_t* chosen, int32_t* counts, int32_t* offsets, int32_t* order, int32_t* row_of_slot,
                 int32_t* scratch, int64_t slots, int64_t E, cudaStream_t s);

// xp[r] = x[order[r] / K]: each row's token, [rows, H].
void moe_gather_rows(const bf16* x, const int32_t* order, bf16* xp, int64_t rows, int64_t K, int64_t H, cudaStream_t s);

// out[t] = residual[t] + sum_i weights[t, i] yp[row_of_slot[t*K + i]] + shared_scale[t] *
// shared[t]: the residual and shared may be null (nothing added), shared_scale null means 1; fp32
// sums, bf16 out [T, H] (the decoder layer's x + mlp(...) in one pass, as the dense MLP's down
// projection adds its residual in the GEMM).
void moe_combine(const bf16* yp, const int32_t* row_of_slot, const float* weights, const bf16* shared,
                 const float* shared_scale, const bf16* residual, bf16* out, int64_t T, int64_t K, int64_t H,
                 cudaStream_t s);

// The combine's backward for the routed experts, per slot: dyp[row] = weights[slot] * dout[t]
// and dweights[slot] = dout[t] . yp[row] (one warp per slot).
void moe_combine_backward(const bf16* dout, const bf16* yp, const int32_t* row_of_slot, const float* weights,
                          bf16* dyp, float* dweights, int64_t T, int64_t K, int64_t H, cudaStream_t s);

// dx[t] = sum_i dxp[row_of_slot[t*K + i]] + a[t] + b[t] (+ c[t] * v, where c is not null), a
// and b [T, H] each or null, c [T] fp32, v [H] bf16: the token's gradient gathered back from its
// rows, plus the router's and the shared experts'.
void moe_token_grad(const bf16* dxp, const int32_t* row_of_slot, const bf16* a, const bf16* b, const float* c,
                    const bf16* v, bf16* dx, int64_t T, int64_t K, int64_t H, cudaStream_t s);

// dlogits [T, E] bf16 from dweights [T, K] (one warp per token): through the renormalisation
// (when `normalize`), the softmax or sigmoid, plus aux_coef times the load-balancing loss's
// gradient E / T^2 * q_j * (c_j - sum_e c_e q_e), q = softmax(logits), c = counts.
void moe_router_backward(const bf16* logits, const float* probs, const int32_t* chosen, const float* weights,
                         const float* dweights, const int32_t* counts, bf16* dlogits, int64_t T, int64_t E, int64_t K,
                         bool sigmoid, bool normalize, double aux_coef, cudaStream_t s);

// The load-balancing loss E * sum_e (counts[e] / T) * (mean over tokens of softmax(logits)_e),
// written to *aux (double); `scratch` holds moe_aux_scratch_floats(T, E) floats.
int64_t moe_aux_scratch_floats(int64_t T, int64_t E);
void moe_aux_loss(const bf16* logits, const int32_t* counts, float* scratch, double* aux, int64_t T, int64_t E,
                  cudaStream_t s);

// Qwen2-MoE's shared_expert_gate: scale[t] = sigmoid(x[t] . w) (one warp per token).
void moe_shared_gate_forward(const bf16* x, const bf16* w, float* scale, int64_t T, int64_t H, cudaStream_t s);
// Its backward given the shared experts' output y (before the gate) and dout: dpre[t] =
// scale (1 - scale) dout[t] . y[t]; dy[t] = scale[t] * dout[t]; dw += sum_t dpre[t] x[t] (fp32).
void moe_shared_gate_backward(const bf16* x, const bf16* y, const bf16* dout, const float* scale, float* dpre,
                              bf16* dy, float* dw, int64_t T, int64_t H, cudaStream_t s);

}  // namespace ub::gpu
