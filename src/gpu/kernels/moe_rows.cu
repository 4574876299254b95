// Moving rows between token order and expert order in the mixture-of-experts layer (gather,
// weighted combine, and their backward) and Qwen2-MoE's shared-expert gate; see moe_ops.cuh. Rows
// are moved 8 bf16 values at a time (the hidden size is a multiple of 8), and every sum is taken
// in a fixed order: a token reads its K rows, no row adds into a token with atomics.
#include <cuda_bf16.h>

#include <algorithm>

#include "gpu/check.hpp"
#include "gpu/kernels/bf16_pack.cuh"
#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/moe_ops.cuh"

namespace ub::gpu {

namespace {

constexpr int kWarp = 32;

unsigned grid_for(int64_t n) { return static_cast<unsigned>(std::clamp<int64_t>((n + 255) / 256, 1, 65536)); }
unsigned blocks_for_warps(int64_t warps) { return static_cast<unsigned>((warps + 7) / 8); }

__global__ void gather_rows_kernel(const bf16* x, const int32_t* order, bf16* xp, int64_t rows, int64_t K, int64_t H) {
  const int64_t packs = rows * H / 8;
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < packs; j += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = j * 8 / H, h = j * 8 % H;
    store8(xp + r * H + h, load8(x + (order[r] / K) * H + h));
  }
}

__global__ void combine_kernel(const bf16* yp, const int32_t* row_of_slot, const float* weights, const bf16* shared,
                               const float* shared_scale, const bf16* residual, bf16* out, int64_t T, int64_t K,
                               int64_t H) {
  const int64_t packs = T * H / 8;
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < packs; j += int64_t{gridDim.x} * blockDim.x) {
    const int64_t t = j * 8 / H, h = j * 8 % H;
    float acc[8] = {};
    if (residual) {
      const Pack8 r = load8(residual + t * H + h);
#pragma unroll
      for (int q = 0; q < 8; ++q) acc[q] = r.get(q);
    }
    for (int64_t i = 0; i < K; ++i) {
      const float w = weights[t * K + i];
      const Pack8 y = load8(yp + int64_t{row_of_slot[t * K + i]} * H + h);
#pragma unroll
      for (int q = 0; q < 8; ++q) acc[q] += w * y.get(q);
    }
    if (shared) {
      const float sc = shared_scale ? shared_scale[t] : 1.f;
      const Pack8 y = load8(shared + t * H + h);
#pragma unroll
      for (int q = 0; q < 8; ++q) acc[q] += sc * y.get(q);
    }
    Pack8 o;
#pragma unroll
    for (int q = 0; q < 8; ++q) o.set(q, acc[q]);
    store8(out + t * H + h, o);
  }
}

// One warp per slot.
__global__ void combine_backward_kernel(const bf16* dout, const bf16* yp, const int32_t* row_of_slot,
                                        const float* weights, bf16* dyp, float* dweights, int64_t T, int64_t K,
                                        int64_t H) {
  const int64_t slot = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (slot >= T * K) return;
  const int64_t t = slot / K, r = row_of_slot[slot];
  const float w = weights[slot];
  float dot = 0;
  for (int64_t h = lane * 8; h < H; h += kWarp * 8) {
    const Pack8 d = load8(dout + t * H + h), y = load8(yp + r * H + h);
    Pack8 o;
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      dot += d.get(q) * y.get(q);
      o.set(q, w * d.get(q));
    }
    store8(dyp + r * H + h, o);
  }
  dot = warp_sum(dot);
  if (lane == 0) dweights[slot] = dot;
}

__global__ void token_grad_kernel(const bf16* dxp, const int32_t* row_of_slot, const bf16* a, const bf16* b,
                                  const float* c, const bf16* v, bf16* dx, int64_t T, int64_t K, int64_t H) {
  const int64_t packs = T * H / 8;
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < packs; j += int64_t{gridDim.x} * blockDim.x) {
    const int64_t t = j * 8 / H, h = j * 8 % H;
    float acc[8] = {};
    for (int64_t i = 0; i < K; ++i) {
      const Pack8 d = load8(dxp + int64_t{row_of_slot[t * K + i]} * H + h);
#pragma unroll
      for (int q = 0; q < 8; ++q) acc[q] += d.get(q);
    }
    for (const bf16* extra : {a, b}) {
      if (!extra) continue;
      const Pack8 d = load8(extra + t * H + h);
#pragma unroll
      for (int q = 0; q < 8; ++q) acc[q] += d.get(q);
    }
    if (c) {
      const Pack8 w = load8(v + h);
#pragma unroll
      for (int q = 0; q < 8; ++q) acc[q] += c[t] * w.get(q);
    }
    Pack8 o;
#pragma unroll
    for (int q = 0; q < 8; ++q) o.set(q, acc[q]);
    store8(dx + t * H + h, o);
  }
}

// One warp per token: the dot product of two bf16 rows of H.
__device__ float warp_row_dot(const bf16* a, const bf16* b, int64_t H, int lane) {
  float dot = 0;
  for (int64_t h = lane * 8; h < H; h += kWarp * 8) {
    const Pack8 x = load8(a + h), y = load8(b + h);
#pragma unroll
    for (int q = 0; q < 8; ++q) dot += x.get(q) * y.get(q);
  }
  return warp_sum(dot);
}

__global__ void shared_gate_forward_kernel(const bf16* x, const bf16* w, float* scale, int64_t T, int64_t H) {
  const int64_t t = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / kWarp;
  if (t >= T) return;
  const float pre = warp_row_dot(x + t * H, w, H, threadIdx.x % kWarp);
  if (threadIdx.x % kWarp == 0) scale[t] = 1.f / (1.f + expf(-pre));
}

__global__ void shared_gate_backward_kernel(const bf16* y, const bf16* dout, const float* scale, float* dpre, bf16* dy,
                                            int64_t T, int64_t H) {
  const int64_t t = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (t >= T) return;
  const float sc = scale[t];
  const float dot = warp_row_dot(dout + t * H, y + t * H, H, lane);
  if (lane == 0) dpre[t] = sc * (1.f - sc) * dot;
  for (int64_t h = lane * 8; h < H; h += kWarp * 8) {
    const Pack8 d = load8(dout + t * H + h);
    Pack8 o;
#pragma unroll
    for (int q = 0; q < 8; ++q) o.set(q, sc * d.get(q));
    store8(dy + t * H + h, o);
  }
}

// dw[h] += sum over tokens of dpre[t] x[t, h]: one thread per column, tokens in order.
__global__ void shared_gate_wgrad_kernel(const bf16* x, const float* dpre, float* dw, int64_t T, int64_t H) {
  const int64_t h = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (h >= H) return;
  float acc = 0;
  for (int64_t t = 0; t < T; ++t) acc += dpre[t] * __bfloat162float(x[t * H + h]);
  dw[h] += acc;
}

void check_width(int64_t H, const char* what) {
  if (H % 8 != 0) throw WorkError(std::string(what) + ": the hidden size must be a multiple of 8");
}

}  // namespace

void moe_gather_rows(const bf16* x, const int32_t* order, bf16* xp, int64_t rows, int64_t K, int64_t H, cudaStream_t s) {
  check_width(H, "moe_gather_rows");
  if (rows == 0) return;
  gather_rows_kernel<<<grid_for(rows * H / 8), 256, 0, s>>>(x, order, xp, rows, K, H);
  UB_CUDA_CHECK_LAUNCH();
}

void moe_combine(const bf16* yp, const int32_t* row_of_slot, const float* weights, const bf16* shared,
                 const float* shared_scale, const bf16* residual, bf16* out, int64_t T, int64_t K, int64_t H,
                 cudaStream_t s) {
  check_width(H, "moe_combine");
  if (T == 0) return;
  combine_kernel<<<grid_for(T * H / 8), 256, 0, s>>>(yp, row_of_slot, weights, shared, shared_scale, residual, out, T, K,
                                                     H);
  UB_CUDA_CHECK_LAUNCH();
}

void moe_combine_backward(const bf16* dout, const bf16* yp, const int32_t* row_of_slot, const float* weights,
                          bf16* dyp, float* dweights, int64_t T, int64_t K, int64_t H, cudaStream_t s) {
  check_width(H, "moe_combine_backward");
  if (T == 0) return;
  combine_backward_kernel<<<blocks_for_warps(T * K), 8 * kWarp, 0, s>>>(dout, yp, row_of_slot, weights, dyp, dweights,
                                                                        T, K, H);
  UB_CUDA_CHECK_LAUNCH();
}

void moe_token_grad(const bf16* dxp, const int32_t* row_of_slot, const bf16* a, const bf16* b, const float* c,
                    const bf16* v, bf16* dx, int64_t T, int64_t K, int64_t H, cudaStream_t s) {
  check_width(H, "moe_token_grad");
  if (c && !v) throw WorkError("moe_token_grad: a per-token scale needs its vector");
  if (T == 0) return;
  token_grad_kernel<<<grid_for(T * H / 8), 256, 0, s>>>(dxp, row_of_slot, a, b, c, v, dx, T, K, H);
  UB_CUDA_CHECK_LAUNCH();
}

void moe_shared_gate_forward(const bf16* x, const bf16* w, float* scale, int64_t T, int64_t H, cudaStream_t s) {
  check_width(H, "moe_shared_gate_forward");
  if (T == 0) return;
  shared_gate_forward_kernel<<<blocks_for_warps(T), 8 * kWarp, 0, s>>>(x, w, scale, T, H);
  UB_CUDA_CHECK_LAUNCH();
}

void moe_shared_gate_backward(const bf16* x, const bf16* y, const bf16* dout, const float* scale, float* dpre,
                              bf16* dy, float* dw, int64_t T, int64_t H, cudaStream_t s) {
  check_width(H, "moe_shared_gate_backward");
  if (T == 0) return;
  shared_gate_backward_kernel<<<blocks_for_warps(T), 8 * kWarp, 0, s>>>(y, dout, scale, dpre, dy, T, H);
  UB_CUDA_CHECK_LAUNCH();
  shared_gate_wgrad_kernel<<<static_cast<unsigned>((H + 255) / 256), 256, 0, s>>>(x, dpre, dw, T, H);
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
