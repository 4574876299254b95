// Token embedding lookup and its gradient; see llama_ops.cuh.
//   forward:  one block per token, copying its table row;
//   backward: one block per vocabulary row, summing (fp32) the gradient rows of the positions that
//             hold that token (a token -> positions index built on the host with the tokens) and
//             writing the whole row, zeros for tokens absent: no memset before, no atomics, the
//             same sum in any run, and one rounding at the end when the gradient is bf16 (as
//             PyTorch's sorted embedding backward).
#include <cuda_bf16.h>

#include "base/error.hpp"
#include "gpu/check.hpp"
#include "gpu/kernels/bf16_pack.cuh"
#include "gpu/kernels/llama_ops.cuh"

namespace ub::gpu {

namespace {

using bf16 = __nv_bfloat16;

__global__ void embedding_forward_kernel(const int32_t* tokens, const bf16* table, bf16* x, int64_t H) {
  const int64_t t = blockIdx.x;
  const bf16* src = table + static_cast<int64_t>(tokens[t]) * H;
  for (int64_t i = threadIdx.x; i < H; i += blockDim.x) x[t * H + i] = src[i];
}

// Eight gradient values at p: read (when accumulating) and written as fp32 or bf16.
__device__ __forceinline__ void load_row8(const float* p, float* v) {
  const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
  v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}
__device__ __forceinline__ void store_row8(float* p, const float* v) {
  reinterpret_cast<float4*>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
  reinterpret_cast<float4*>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
}
__device__ __forceinline__ void load_row8(const bf16* p, float* v) {
  const Pack8 a = load8(p);
#pragma unroll
  for (int q = 0; q < 8; ++q) v[q] = a.get(q);
}
__device__ __forceinline__ void store_row8(bf16* p, const float* v) {
  Pack8 a;
#pragma unroll
  for (int q = 0; q < 8; ++q) a.set(q, v[q]);
  store8(p, a);
}

template <class G>
__global__ void embedding_backward_kernel(const int32_t* order, const int32_t* starts, const bf16* dx, G* dtable,
                                          bool accumulate, int64_t H) {
  const int64_t row = blockIdx.x;
  const int32_t first = starts[row], last = starts[row + 1];
  G* dst = dtable + row * H;
  for (int64_t j = threadIdx.x * 8; j < H; j += blockDim.x * 8) {
    float acc[8] = {};
    if (accumulate) load_row8(dst + j, acc);
    for (int32_t p = first; p < last; ++p) {
      const Pack8 g = load8(dx + static_cast<int64_t>(order[p]) * H + j);
#pragma unroll
      for (int q = 0; q < 8; ++q) acc[q] += g.get(q);
    }
    store_row8(dst + j, acc);
  }
}

}  // namespace

TokenIndex index_tokens(const std::vector<int32_t>& tokens, int64_t V) {
  TokenIndex ix;
  ix.starts.assign(static_cast<size_t>(V) + 1, 0);
  for (size_t t = 0; t < tokens.size(); ++t) {
    if (tokens[t] < 0 || tokens[t] >= V) {
      throw WorkError("token id " + std::to_string(tokens[t]) + " at position " + std::to_string(t) +
                      " is outside the vocabulary (0.." + std::to_string(V - 1) + ")");
    }
    ++ix.starts[static_cast<size_t>(tokens[t]) + 1];
  }
  for (size_t v = 0; v < static_cast<size_t>(V); ++v) ix.starts[v + 1] += ix.starts[v];
  ix.order.resize(tokens.size());
  std::vector<int32_t> next(ix.starts.begin(), ix.starts.end() - 1);
  for (size_t t = 0; t < tokens.size(); ++t) ix.order[static_cast<size_t>(next[static_cast<size_t>(tokens[t])]++)] = static_cast<int32_t>(t);
  return ix;
}

void embedding_forward(const int32_t* tokens, const bf16* table, bf16* x, int64_t T, int64_t H, cudaStream_t s) {
  embedding_forward_kernel<<<static_cast<unsigned>(T), 256, 0, s>>>(tokens, table, x, H);
  UB_CUDA_CHECK_LAUNCH();
}

void embedding_backward(const int32_t* order, const int32_t* starts, const bf16* dx, Fp32OrBf16 dtable, bool accumulate,
                        int64_t V, int64_t H, cudaStream_t s) {
  if (H % 8 != 0) throw WorkError("embedding_backward: the hidden size must be a multiple of 8");
  visit(dtable, [&](auto* table) {
    embedding_backward_kernel<<<static_cast<unsigned>(V), 128, 0, s>>>(order, starts, dx, table, accumulate, H);
  });
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
