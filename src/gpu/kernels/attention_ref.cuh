// A straightforward attention in fp32 on the GPU, the reference every cuDNN attention
// configuration is validated against before it is timed (the same formulas as the CPU reference
// in model/reference/attention_cpu.hpp, which CI tests; this one runs at the real sizes).
//
// Inputs are the tested kernel's own bf16 / fp16 buffers in BSHD layout. Work is limited to
// sampled positions: forward (O, LSE) and dQ at sampled query rows, dK and dV at sampled key
// columns. The column references need LSE and rowsum(dO * O) of every row; they take the tested
// kernel's (themselves checked at the sampled rows), which keeps the reference's cost to
// O(samples * seq) instead of O(seq^2).
//
// Masks: token i attends to the keys of its own document, with `causal` only to j <= i, and with
// a window w also only to j > i - w.
// Documents are listed by device arrays (none: the whole sequence is one document); they repeat
// in every batch entry.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/elem.hpp"

namespace ub::gpu {

struct RefAttentionDims {
  int64_t batch = 1, seqlen = 0, heads = 0, kv_heads = 0, head_dim = 0;
  bool causal = true;
  int64_t window = 0;  // causal sliding window in keys (0: none)
  float scale = 1;
  // Packed documents (device arrays; null: one document): doc_of[i] is the document of position
  // i, doc_start[k] the first position of document k (doc_start[docs] = seqlen).
  const int* doc_of = nullptr;
  const int* doc_start = nullptr;
  int64_t docs = 1;
  // The tested kernel's statistic is [batch * docs, heads, stat_len]: stat_len is cuDNN's sequence
  // length, the longest document (0: seqlen).
  int64_t stat_len = 0;
};

// Sampled rows: o_ref [n][batch][heads][head_dim], lse_ref [n][batch][heads].
void ref_attention_forward_rows(Elem e, const void* q, const void* k, const void* v,
                                const RefAttentionDims& d, const int* rows, int n, float* o_ref,
                                float* lse_ref, cudaStream_t s);

// dQ at sampled rows (uses the reference's own o_ref / lse_ref of those rows): dq_ref like o_ref.
void ref_attention_dq_rows(Elem e, const void* q, const void* k, const void* v, const void* d_o,
                           const RefAttentionDims& d, const int* rows, int n, const float* o_ref,
                           const float* lse_ref, float* dq_ref, cudaStream_t s);

// dK, dV at sampled key columns: [n][batch][kv_heads][head_dim]. `lse` is the tested kernel's
// statistic [batch * docs, heads, stat_len] (docs folded into the batch, as cuDNN runs them) and
// `row_dot` rowsum(dO * O) in the same layout.
void ref_attention_dkv_cols(Elem e, const void* q, const void* k, const void* v, const void* d_o,
                            const RefAttentionDims& d, const int* cols, int n, const float* lse,
                            const float* row_dot, float* dk_ref, float* dv_ref, cudaStream_t s);

// rowsum(dO * O) of every row, in the statistic's layout (see above).
void attention_row_dot(Elem e, const void* d_o, const void* o, const RefAttentionDims& d, float* row_dot,
                       cudaStream_t s);

// Errors of a tested BSHD tensor (`heads` heads) at sampled sequence positions against a
// reference [n][batch][heads][head_dim]: sums of squared error and squared reference, the
// largest absolute error and reference, and the count of non-finite values (NaN never passes).
struct CompareSums {
  double err2 = 0, ref2 = 0, max_err = 0, max_ref = 0;
  unsigned long long non_finite = 0;
};
void compare_sampled(Elem e, const void* test, const float* ref, const RefAttentionDims& d, int64_t heads,
                     const int* positions, int n, CompareSums* device_sums, cudaStream_t s);
// The same for the statistic (fp32, statistic layout) against lse_ref [n][batch][heads].
void compare_sampled_lse(const float* lse, const float* lse_ref, const RefAttentionDims& d,
                         const int* positions, int n, CompareSums* device_sums, cudaStream_t s);

}  // namespace ub::gpu
