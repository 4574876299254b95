// SwiGLU forward and backward over the fused gate|up projection output; see llama_ops.cuh.
// The intermediate size is a multiple of 8 (check_trainable), so each thread handles 8
// consecutive columns with 16-byte loads and stores.
#include <cuda_bf16.h>

#include "gpu/check.hpp"
#include "gpu/kernels/bf16_pack.cuh"
#include "gpu/kernels/llama_ops.cuh"

namespace ub::gpu {

namespace {

using bf16 = __nv_bfloat16;

unsigned grid_for(int64_t n) { return static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65536)); }


__global__ void swiglu_forward_kernel(const bf16* gu, bf16* h, int64_t T, int64_t I) {
  const int64_t packs = T * I / 8;
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < packs; j += int64_t{gridDim.x} * blockDim.x) {
    const int64_t t = j * 8 / I, i = j * 8 % I;
    const Pack8 g = load8(gu + t * 2 * I + i), u = load8(gu + t * 2 * I + I + i);
    Pack8 out;
#pragma unroll
    for (int q = 0; q < 8; ++q) out.set(q, silu(g.get(q)) * u.get(q));
    store8(h + j * 8, out);
  }
}

__global__ void swiglu_backward_kernel(const bf16* dh, const bf16* gu, bf16* dgu, int64_t T, int64_t I) {
  const int64_t packs = T * I / 8;
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < packs; j += int64_t{gridDim.x} * blockDim.x) {
    const int64_t t = j * 8 / I, i = j * 8 % I;
    const Pack8 g = load8(gu + t * 2 * I + i), u = load8(gu + t * 2 * I + I + i), d = load8(dh + j * 8);
    Pack8 dg, du;
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      dg.set(q, d.get(q) * u.get(q) * silu_grad(g.get(q)));
      du.set(q, d.get(q) * silu(g.get(q)));
    }
    store8(dgu + t * 2 * I + i, dg);
    store8(dgu + t * 2 * I + I + i, du);
  }
}

}  // namespace

void swiglu_forward(const bf16* gu, bf16* h, int64_t T, int64_t I, cudaStream_t s) {
  if (I % 8 != 0) throw WorkError("swiglu_forward: the intermediate size must be a multiple of 8");
  swiglu_forward_kernel<<<grid_for(T * I / 8), 256, 0, s>>>(gu, h, T, I);
  UB_CUDA_CHECK_LAUNCH();
}

void swiglu_backward(const bf16* dh, const bf16* gu, bf16* dgu, int64_t T, int64_t I, cudaStream_t s) {
  if (I % 8 != 0) throw WorkError("swiglu_backward: the intermediate size must be a multiple of 8");
  swiglu_backward_kernel<<<grid_for(T * I / 8), 256, 0, s>>>(dh, gu, dgu, T, I);
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
