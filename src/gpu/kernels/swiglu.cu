// SwiGLU forward and backward over the fused gate|up projection output; see llama_ops.cuh.
#include <cuda_bf16.h>

#include "gpu/check.hpp"
#include "gpu/kernels/llama_ops.cuh"

namespace ub::gpu {

namespace {

using bf16 = __nv_bfloat16;

unsigned grid_for(int64_t n) { return static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65536)); }

__global__ void swiglu_forward_kernel(const bf16* gu, bf16* h, int64_t T, int64_t I) {
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < T * I; j += int64_t{gridDim.x} * blockDim.x) {
    const int64_t t = j / I, i = j % I;
    const float g = __bfloat162float(gu[t * 2 * I + i]), u = __bfloat162float(gu[t * 2 * I + I + i]);
    h[j] = __float2bfloat16(silu(g) * u);
  }
}

__global__ void swiglu_backward_kernel(const bf16* dh, const bf16* gu, bf16* dgu, int64_t T, int64_t I) {
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < T * I; j += int64_t{gridDim.x} * blockDim.x) {
    const int64_t t = j / I, i = j % I;
    const float g = __bfloat162float(gu[t * 2 * I + i]), u = __bfloat162float(gu[t * 2 * I + I + i]);
    const float d = __bfloat162float(dh[j]);
    dgu[t * 2 * I + i] = __float2bfloat16(d * u * silu_grad(g));
    dgu[t * 2 * I + I + i] = __float2bfloat16(d * silu(g));
  }
}

}  // namespace

void swiglu_forward(const void* gu, void* h, int64_t T, int64_t I, cudaStream_t s) {
  swiglu_forward_kernel<<<grid_for(T * I), 256, 0, s>>>(static_cast<const bf16*>(gu), static_cast<bf16*>(h), T, I);
  UB_CUDA_CHECK_LAUNCH();
}

void swiglu_backward(const void* dh, const void* gu, void* dgu, int64_t T, int64_t I, cudaStream_t s) {
  swiglu_backward_kernel<<<grid_for(T * I), 256, 0, s>>>(static_cast<const bf16*>(dh), static_cast<const bf16*>(gu),
                                                        static_cast<bf16*>(dgu), T, I);
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
