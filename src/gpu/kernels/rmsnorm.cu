// RMSNorm forward and backward; see llama_ops.cuh. The hidden size is a multiple of 8
// (check_trainable), so rows are read and written 8 bf16 (16 bytes) at a time.
//   forward:  one warp per row (sum of squares by warp shuffles), 8 rows per block;
//   backward: one pass for dx and dw together (two kernels read dy and x twice): a block owns a
//             chunk of rows and each thread the same 8 * P columns of every row, so the thread sums
//             its columns' dw = dy * x * rstd in registers across the chunk and adds them to the
//             global dw once (one atomic per column and block); each row's dot product is a block
//             reduction, R rows at a time. (Summing dw in shared memory instead, one float atomic
//             per element, ran at 0.8 TB/s on the H200.)
#include <cuda_bf16.h>

#include <algorithm>

#include "gpu/check.hpp"
#include "gpu/kernels/bf16_pack.cuh"
#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/llama_ops.cuh"
#include "gpu/kernels/sm_count.cuh"

namespace ub::gpu {

namespace {

using bf16 = __nv_bfloat16;
constexpr int kWarpsPerBlock = 8;


__global__ void rmsnorm_forward_kernel(const bf16* x, const bf16* w, bf16* y, float* rstd, int64_t T, int64_t H,
                                       float eps) {
  const int lane = threadIdx.x & 31;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= T) return;
  const bf16* xr = x + row * H;
  float ss = 0;
  for (int64_t j = lane * 8; j < H; j += 32 * 8) {
    const Pack8 v = load8(xr + j);
#pragma unroll
    for (int q = 0; q < 8; ++q) ss += v.get(q) * v.get(q);
  }
  const float r = rsqrtf(warp_sum(ss) / static_cast<float>(H) + eps);
  if (lane == 0) rstd[row] = r;
  for (int64_t j = lane * 8; j < H; j += 32 * 8) {
    const Pack8 v = load8(xr + j), g = load8(w + j);
    Pack8 out;
#pragma unroll
    for (int q = 0; q < 8; ++q) out.set(q, g.get(q) * v.get(q) * r);
    store8(y + row * H + j, out);
  }
}

constexpr int kBackwardMaxThreads = 512;

template <int P, int R>
__global__ void __launch_bounds__(kBackwardMaxThreads) rmsnorm_backward_kernel(const bf16* dy, const bf16* x, const bf16* w, const float* rstd,
                                        const bf16* dres, bf16* dx, float* dw, int64_t T, int64_t H,
                                        int64_t rows_per_block) {
  __shared__ float part[2][R][32];  // per-warp sums of the R rows' dot products, double-buffered
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * rows_per_block;
  const int64_t last = min(first + rows_per_block, T);
  int64_t col[P];
  Pack8 wv[P];
  float acc[P][8] = {};
#pragma unroll
  for (int k = 0; k < P; ++k) {
    col[k] = (threadIdx.x + static_cast<int64_t>(k) * blockDim.x) * 8;
    wv[k] = col[k] < H ? load8(w + col[k]) : Pack8{};
  }
  int buf = 0;
  for (int64_t r0 = first; r0 < last; r0 += R, buf ^= 1) {
    Pack8 g[R][P], v[R][P], res[R][P];  // the residual gradient too: all loads before the reduction
    float rs[R], dot[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t row = r0 + r;
      rs[r] = row < last ? rstd[row] : 0.0f;
      dot[r] = 0;
#pragma unroll
      for (int k = 0; k < P; ++k) {
        const bool in = row < last && col[k] < H;
        g[r][k] = in ? load8(dy + row * H + col[k]) : Pack8{};
        v[r][k] = in ? load8(x + row * H + col[k]) : Pack8{};
        res[r][k] = in && dres ? load8(dres + row * H + col[k]) : Pack8{};
#pragma unroll
        for (int q = 0; q < 8; ++q) dot[r] += g[r][k].get(q) * wv[k].get(q) * v[r][k].get(q);
      }
      dot[r] = warp_sum(dot[r]);
      if (lane == 0) part[buf][r][warp] = dot[r];
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float total = 0;
      for (int i = 0; i < warps; ++i) total += part[buf][r][i];
      const int64_t row = r0 + r;
      if (row >= last) continue;
      const float d = total * rs[r] / static_cast<float>(H);
#pragma unroll
      for (int k = 0; k < P; ++k) {
        if (col[k] >= H) continue;
        Pack8 out;
#pragma unroll
        for (int q = 0; q < 8; ++q) {
          const float gq = g[r][k].get(q), vq = v[r][k].get(q);
          float o = rs[r] * (gq * wv[k].get(q) - vq * rs[r] * d);
          if (dres) o += res[r][k].get(q);
          out.set(q, o);
          acc[k][q] += gq * vq * rs[r];
        }
        store8(dx + row * H + col[k], out);
      }
    }
  }
#pragma unroll
  for (int k = 0; k < P; ++k) {
    if (col[k] >= H || first >= last) continue;
#pragma unroll
    for (int q = 0; q < 8; ++q) atomicAdd(dw + col[k] + q, acc[k][q]);
  }
}

// P packs of 8 columns per thread, R rows per reduction; as many blocks as fit on the GPU at once
// (one wave, each block a chunk of rows), no more: each block ends with H global atomics.
template <int P, int R>
void launch_backward(const bf16* dy, const bf16* x, const bf16* w, const float* rstd, const bf16* residual_grad,
                     bf16* dx, float* dw, int64_t T, int64_t H, cudaStream_t s) {
  const int64_t packs = H / 8;
  const int threads = static_cast<int>(((packs + P - 1) / P + 31) / 32 * 32);
  int per_sm = 0;
  UB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rmsnorm_backward_kernel<P, R>, threads, 0));
  const int64_t blocks = std::max<int64_t>(1, std::min((T + R - 1) / R, int64_t{std::max(per_sm, 1)} * current_sm_count()));
  const int64_t rows_per_block = (T + blocks - 1) / blocks;
  rmsnorm_backward_kernel<P, R><<<static_cast<unsigned>(blocks), threads, 0, s>>>(dy, x, w, rstd, residual_grad, dx, dw,
                                                                                 T, H, rows_per_block);
  UB_CUDA_CHECK_LAUNCH();
}

void require_multiple_of_8(int64_t H, const char* what) {
  if (H % 8 != 0) throw WorkError(std::string(what) + ": the hidden size must be a multiple of 8");
}

}  // namespace

void rmsnorm_forward(const bf16* x, const bf16* w, bf16* y, float* rstd, int64_t T, int64_t H, double eps,
                     cudaStream_t s) {
  require_multiple_of_8(H, "rmsnorm_forward");
  const auto blocks = static_cast<unsigned>((T + kWarpsPerBlock - 1) / kWarpsPerBlock);
  rmsnorm_forward_kernel<<<blocks, 32 * kWarpsPerBlock, 0, s>>>(x, w, y, rstd, T, H, static_cast<float>(eps));
  UB_CUDA_CHECK_LAUNCH();
}

void rmsnorm_backward(const bf16* dy, const bf16* x, const bf16* w, const float* rstd, const bf16* residual_grad,
                      bf16* dx, float* dw, int64_t T, int64_t H, cudaStream_t s) {
  require_multiple_of_8(H, "rmsnorm_backward");
  if (T <= 0) return;
  static_assert(kBackwardMaxThreads == 512, "the widths below assume 512 threads of 8 columns each");
  if (H <= 4 * 1024) {
    launch_backward<1, 2>(dy, x, w, rstd, residual_grad, dx, dw, T, H, s);
  } else if (H <= 8 * 1024) {
    launch_backward<2, 2>(dy, x, w, rstd, residual_grad, dx, dw, T, H, s);
  } else if (H <= 16 * 1024) {
    launch_backward<4, 1>(dy, x, w, rstd, residual_grad, dx, dw, T, H, s);
  } else if (H <= 32 * 1024) {
    launch_backward<8, 1>(dy, x, w, rstd, residual_grad, dx, dw, T, H, s);
  } else {
    throw WorkError("rmsnorm_backward: hidden sizes above 32768 are not supported");
  }
}

}  // namespace ub::gpu
