// Cross-entropy over next-token labels with its gradient written over the logits; see
// llama_ops.cuh. One block per row: a pass for the row's max and sum of exponentials (online
// softmax per thread, then merged across the block), a pass writing (softmax - onehot) / count.
// Rows are read 8 bf16 (16 bytes) at a time when the vocabulary allows it.
#include <cuda_bf16.h>

#include "gpu/check.hpp"
#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/llama_ops.cuh"

namespace ub::gpu {

namespace {

using bf16 = __nv_bfloat16;
constexpr int kThreads = 512;

// Online softmax state: running max m and sum of exp(x - m).
__device__ __forceinline__ void online(float x, float& m, float& sum) {
  if (x > m) {
    sum = sum * __expf(m - x) + 1.0f;
    m = x;
  } else {
    sum += __expf(x - m);
  }
}

template <int kVec>
__global__ void cross_entropy_kernel(bf16* logits, const int32_t* tokens, float* row_loss, int64_t first, int64_t S,
                                     int64_t V, float inv_count) {
  const int64_t t = first + blockIdx.x;
  bf16* z = logits + static_cast<int64_t>(blockIdx.x) * V;
  const int64_t vecs = V / kVec;
  using Pack = typename std::conditional<kVec == 8, uint4, bf16>::type;
  Pack* zp = reinterpret_cast<Pack*>(z);
  if (t % S == S - 1) {  // the last position of a sequence has no label
    for (int64_t j = threadIdx.x; j < V; j += blockDim.x) z[j] = __float2bfloat16(0.0f);
    if (threadIdx.x == 0) row_loss[t] = 0;
    return;
  }
  float m = -INFINITY, sum = 0;
  for (int64_t j = threadIdx.x; j < vecs; j += blockDim.x) {
    Pack p = zp[j];
    const bf16* e = reinterpret_cast<const bf16*>(&p);
#pragma unroll
    for (int q = 0; q < kVec; ++q) online(__bfloat162float(e[q]), m, sum);
  }
  const float row_max = block_max(m);
  const float total = block_sum(m == -INFINITY ? 0.0f : sum * __expf(m - row_max));
  const float lse = row_max + logf(total);
  const int32_t label = tokens[t + 1];
  const float label_logit = __bfloat162float(z[label]);
  __syncthreads();  // everyone has read z[label] before it is overwritten
  for (int64_t j = threadIdx.x; j < vecs; j += blockDim.x) {
    Pack p = zp[j];
    bf16* e = reinterpret_cast<bf16*>(&p);
#pragma unroll
    for (int q = 0; q < kVec; ++q) {
      const int64_t col = j * kVec + q;
      const float prob = __expf(__bfloat162float(e[q]) - lse);
      e[q] = __float2bfloat16((prob - (col == label ? 1.0f : 0.0f)) * inv_count);
    }
    zp[j] = p;
  }
  if (threadIdx.x == 0) row_loss[t] = lse - label_logit;
}

__global__ void sum_loss_kernel(const float* row_loss, int64_t T, double inv_count, double* loss) {
  double s = 0;
  for (int64_t i = threadIdx.x; i < T; i += blockDim.x) s += row_loss[i];
  s = block_sum(s);
  if (threadIdx.x == 0) *loss = s * inv_count;
}

}  // namespace

void cross_entropy_forward_backward(bf16* logits, const int32_t* tokens, float* row_loss, int64_t first, int64_t rows,
                                    int64_t S, int64_t V, double count, cudaStream_t s) {
  const auto inv = static_cast<float>(1.0 / count);
  bf16* z = logits;
  if (V % 8 == 0 && reinterpret_cast<uintptr_t>(z) % 16 == 0) {
    cross_entropy_kernel<8><<<static_cast<unsigned>(rows), kThreads, 0, s>>>(z, tokens, row_loss, first, S, V, inv);
  } else {
    cross_entropy_kernel<1><<<static_cast<unsigned>(rows), kThreads, 0, s>>>(z, tokens, row_loss, first, S, V, inv);
  }
  UB_CUDA_CHECK_LAUNCH();
}

void sum_loss(const float* row_loss, int64_t T, double count, double* loss, cudaStream_t s) {
  sum_loss_kernel<<<1, 1024, 0, s>>>(row_loss, T, 1.0 / count, loss);
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
