// Token embedding lookup and its scatter-add gradient; see llama_ops.cuh. One block per token.
#include <cuda_bf16.h>

#include "gpu/check.hpp"
#include "gpu/kernels/llama_ops.cuh"

namespace ub::gpu {

namespace {

using bf16 = __nv_bfloat16;

__global__ void embedding_forward_kernel(const int32_t* tokens, const bf16* table, bf16* x, int64_t H) {
  const int64_t t = blockIdx.x;
  const bf16* src = table + static_cast<int64_t>(tokens[t]) * H;
  for (int64_t i = threadIdx.x; i < H; i += blockDim.x) x[t * H + i] = src[i];
}

__global__ void embedding_backward_kernel(const int32_t* tokens, const bf16* dx, float* dtable, int64_t H) {
  const int64_t t = blockIdx.x;
  float* dst = dtable + static_cast<int64_t>(tokens[t]) * H;
  for (int64_t i = threadIdx.x; i < H; i += blockDim.x) atomicAdd(dst + i, __bfloat162float(dx[t * H + i]));
}

}  // namespace

void embedding_forward(const int32_t* tokens, const void* table, void* x, int64_t T, int64_t H, cudaStream_t s) {
  embedding_forward_kernel<<<static_cast<unsigned>(T), 256, 0, s>>>(tokens, static_cast<const bf16*>(table),
                                                                   static_cast<bf16*>(x), H);
  UB_CUDA_CHECK_LAUNCH();
}

void embedding_backward(const int32_t* tokens, const void* dx, float* dtable, int64_t T, int64_t H, cudaStream_t s) {
  embedding_backward_kernel<<<static_cast<unsigned>(T), 256, 0, s>>>(tokens, static_cast<const bf16*>(dx), dtable, H);
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
