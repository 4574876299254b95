// The fp32 reference attention; see attention_ref.cuh. One block of 128 threads per sampled row
// (or column): threads take 128 keys (rows) at a time, each computing one score as a dot product
// over the head dim, then the block applies them to the output dims it owns (t and t + 128, so
// head dims up to 256). Softmax is online (running max and sum), as in the fused kernels, but in
// fp32 throughout with nothing rounded to 16 bits.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>
#include <type_traits>

#include "gpu/check.hpp"
#include "gpu/kernels/attention_ref.cuh"

namespace ub::gpu {

namespace {

constexpr int kTile = 128;

__device__ __forceinline__ float ld(const __nv_bfloat16* p, int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ float ld(const __half* p, int64_t i) { return __half2float(p[i]); }

struct Index {
  RefAttentionDims d;
  __device__ int64_t q(int64_t b, int64_t i, int64_t h, int64_t x) const {
    return ((b * d.seqlen + i) * d.heads + h) * d.head_dim + x;
  }
  __device__ int64_t kv(int64_t b, int64_t j, int64_t h, int64_t x) const {
    return ((b * d.seqlen + j) * d.kv_heads + h) * d.head_dim + x;
  }
  __device__ int64_t doc(int64_t i) const { return d.doc_of ? d.doc_of[i] : 0; }
  __device__ int64_t doc_begin(int64_t i) const { return d.doc_of ? d.doc_start[doc(i)] : 0; }
  __device__ int64_t doc_end(int64_t i) const { return d.doc_of ? d.doc_start[doc(i) + 1] : d.seqlen; }
  // The statistic's layout: [batch * docs, heads, stat_len].
  __device__ int64_t stat(int64_t b, int64_t i, int64_t h) const {
    const int64_t len = d.stat_len > 0 ? d.stat_len : d.seqlen;
    return ((b * d.docs + doc(i)) * d.heads + h) * len + (i - doc_begin(i));
  }
  // Keys row i attends to: [key_begin, key_end) (a window starts it at i - window + 1).
  __device__ int64_t key_begin(int64_t i) const {
    const int64_t first = d.window > 0 ? i - d.window + 1 : 0;
    return first > doc_begin(i) ? first : doc_begin(i);
  }
  __device__ int64_t key_end(int64_t i) const { return d.causal ? i + 1 : doc_end(i); }
  // Rows that attend to key j: [row_begin, row_end) (a window ends it at j + window).
  __device__ int64_t row_begin(int64_t j) const { return d.causal ? j : doc_begin(j); }
  __device__ int64_t row_end(int64_t j) const {
    return d.window > 0 && j + d.window < doc_end(j) ? j + d.window : doc_end(j);
  }
};

__device__ float block_reduce(float v, float* red, bool is_max) {
  for (int o = 16; o > 0; o /= 2) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) red[warp] = v;
  __syncthreads();
  float r = red[0];
  for (int w = 1; w < kTile / 32; ++w) r = is_max ? fmaxf(r, red[w]) : r + red[w];
  __syncthreads();
  return r;
}

template <class T>
__device__ float dot_shared(const float* shared_vec, const T* p, int64_t base, int64_t n) {
  float s = 0;
  for (int64_t x = 0; x < n; ++x) s += shared_vec[x] * ld(p, base + x);
  return s;
}

template <class T>
__global__ void forward_rows(const T* q, const T* k, const T* v, RefAttentionDims d, const int* rows,
                             float* o_ref, float* lse_ref) {
  extern __shared__ float sh[];
  float* qs = sh;
  float* ps = qs + d.head_dim;
  float* red = ps + kTile;
  const Index ix{d};
  const int t = threadIdx.x;
  const int64_t r = blockIdx.x, h = blockIdx.y, b = blockIdx.z, i = rows[r];
  const int64_t hk = h / (d.heads / d.kv_heads);
  for (int64_t x = t; x < d.head_dim; x += kTile) qs[x] = ld(q, ix.q(b, i, h, x));
  __syncthreads();
  const int64_t lo = ix.key_begin(i), hi = ix.key_end(i);
  float m = -FLT_MAX, l = 0, acc0 = 0, acc1 = 0;
  for (int64_t j0 = lo; j0 < hi; j0 += kTile) {
    const int64_t j = j0 + t;
    const float sc = j < hi ? d.scale * dot_shared(qs, k, ix.kv(b, j, hk, 0), d.head_dim) : -FLT_MAX;
    const float mn = fmaxf(m, block_reduce(sc, red, true));
    const float p = j < hi ? expf(sc - mn) : 0.f;
    ps[t] = p;
    const float lt = block_reduce(p, red, false);
    const float corr = expf(m - mn);
    l = l * corr + lt;
    acc0 *= corr;
    acc1 *= corr;
    m = mn;
    const int64_t count = hi - j0 < kTile ? hi - j0 : kTile;
    for (int64_t jj = 0; jj < count; ++jj) {
      if (t < d.head_dim) acc0 += ps[jj] * ld(v, ix.kv(b, j0 + jj, hk, t));
      if (t + kTile < d.head_dim) acc1 += ps[jj] * ld(v, ix.kv(b, j0 + jj, hk, t + kTile));
    }
    __syncthreads();
  }
  const int64_t out = ((r * d.batch + b) * d.heads + h) * d.head_dim;
  if (t < d.head_dim) o_ref[out + t] = acc0 / l;
  if (t + kTile < d.head_dim) o_ref[out + t + kTile] = acc1 / l;
  if (t == 0) lse_ref[(r * d.batch + b) * d.heads + h] = m + logf(l);
}

template <class T>
__global__ void dq_rows(const T* q, const T* k, const T* v, const T* d_o, RefAttentionDims d, const int* rows,
                        const float* o_ref, const float* lse_ref, float* dq_ref) {
  extern __shared__ float sh[];
  float* qs = sh;
  float* dos = qs + d.head_dim;
  float* dss = dos + d.head_dim;
  float* red = dss + kTile;
  const Index ix{d};
  const int t = threadIdx.x;
  const int64_t r = blockIdx.x, h = blockIdx.y, b = blockIdx.z, i = rows[r];
  const int64_t hk = h / (d.heads / d.kv_heads);
  const int64_t ref_row = ((r * d.batch + b) * d.heads + h);
  float part = 0;
  for (int64_t x = t; x < d.head_dim; x += kTile) {
    qs[x] = ld(q, ix.q(b, i, h, x));
    dos[x] = ld(d_o, ix.q(b, i, h, x));
    part += dos[x] * o_ref[ref_row * d.head_dim + x];
  }
  const float row_dot = block_reduce(part, red, false);  // also orders the shared writes
  const float lse = lse_ref[ref_row];
  const int64_t lo = ix.key_begin(i), hi = ix.key_end(i);
  float acc0 = 0, acc1 = 0;
  for (int64_t j0 = lo; j0 < hi; j0 += kTile) {
    const int64_t j = j0 + t;
    float ds = 0;
    if (j < hi) {
      const float p = expf(d.scale * dot_shared(qs, k, ix.kv(b, j, hk, 0), d.head_dim) - lse);
      const float dp = dot_shared(dos, v, ix.kv(b, j, hk, 0), d.head_dim);
      ds = p * (dp - row_dot);
    }
    dss[t] = ds;
    __syncthreads();
    const int64_t count = hi - j0 < kTile ? hi - j0 : kTile;
    for (int64_t jj = 0; jj < count; ++jj) {
      if (t < d.head_dim) acc0 += dss[jj] * ld(k, ix.kv(b, j0 + jj, hk, t));
      if (t + kTile < d.head_dim) acc1 += dss[jj] * ld(k, ix.kv(b, j0 + jj, hk, t + kTile));
    }
    __syncthreads();
  }
  if (t < d.head_dim) dq_ref[ref_row * d.head_dim + t] = d.scale * acc0;
  if (t + kTile < d.head_dim) dq_ref[ref_row * d.head_dim + t + kTile] = d.scale * acc1;
}

template <class T>
__global__ void dkv_cols(const T* q, const T* k, const T* v, const T* d_o, RefAttentionDims d, const int* cols,
                         const float* lse, const float* row_dot, float* dk_ref, float* dv_ref) {
  extern __shared__ float sh[];
  float* ks = sh;
  float* vs = ks + d.head_dim;
  float* ps = vs + d.head_dim;
  float* dss = ps + kTile;
  const Index ix{d};
  const int t = threadIdx.x;
  const int64_t c = blockIdx.x, hk = blockIdx.y, b = blockIdx.z, j = cols[c];
  const int64_t group = d.heads / d.kv_heads;
  for (int64_t x = t; x < d.head_dim; x += kTile) {
    ks[x] = ld(k, ix.kv(b, j, hk, x));
    vs[x] = ld(v, ix.kv(b, j, hk, x));
  }
  __syncthreads();
  const int64_t lo = ix.row_begin(j), hi = ix.row_end(j);
  float dk0 = 0, dk1 = 0, dv0 = 0, dv1 = 0;
  for (int64_t g = 0; g < group; ++g) {
    const int64_t h = hk * group + g;
    for (int64_t i0 = lo; i0 < hi; i0 += kTile) {
      const int64_t i = i0 + t;
      float p = 0, ds = 0;
      if (i < hi) {
        float sc = 0, dp = 0;
        for (int64_t x = 0; x < d.head_dim; ++x) {
          sc += ld(q, ix.q(b, i, h, x)) * ks[x];
          dp += ld(d_o, ix.q(b, i, h, x)) * vs[x];
        }
        p = expf(d.scale * sc - lse[ix.stat(b, i, h)]);
        ds = p * (dp - row_dot[ix.stat(b, i, h)]);
      }
      ps[t] = p;
      dss[t] = ds;
      __syncthreads();
      const int64_t count = hi - i0 < kTile ? hi - i0 : kTile;
      for (int64_t ii = 0; ii < count; ++ii) {
        if (t < d.head_dim) {
          dv0 += ps[ii] * ld(d_o, ix.q(b, i0 + ii, h, t));
          dk0 += dss[ii] * ld(q, ix.q(b, i0 + ii, h, t));
        }
        if (t + kTile < d.head_dim) {
          dv1 += ps[ii] * ld(d_o, ix.q(b, i0 + ii, h, t + kTile));
          dk1 += dss[ii] * ld(q, ix.q(b, i0 + ii, h, t + kTile));
        }
      }
      __syncthreads();
    }
  }
  const int64_t out = ((c * d.batch + b) * d.kv_heads + hk) * d.head_dim;
  if (t < d.head_dim) {
    dk_ref[out + t] = d.scale * dk0;
    dv_ref[out + t] = dv0;
  }
  if (t + kTile < d.head_dim) {
    dk_ref[out + t + kTile] = d.scale * dk1;
    dv_ref[out + t + kTile] = dv1;
  }
}

// One warp per (batch, row, head).
template <class T>
__global__ void row_dot_kernel(const T* d_o, const T* o, RefAttentionDims d, float* row_dot) {
  const Index ix{d};
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= d.batch * d.seqlen * d.heads) return;
  const int64_t h = warp % d.heads, i = (warp / d.heads) % d.seqlen, b = warp / (d.heads * d.seqlen);
  float s = 0;
  for (int64_t x = lane; x < d.head_dim; x += 32) s += ld(d_o, ix.q(b, i, h, x)) * ld(o, ix.q(b, i, h, x));
  for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
  if (lane == 0) row_dot[ix.stat(b, i, h)] = s;
}

// Non-negative doubles order like their bit patterns.
__device__ void atomic_max_nonneg(double* p, double v) {
  atomicMax(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(__double_as_longlong(v)));
}

// One thread's share of a comparison.
struct ErrorSums {
  double err2 = 0, ref2 = 0, max_err = 0, max_ref = 0;
  unsigned long long bad = 0;
  __device__ void add(float got, float want) {
    if (!isfinite(got) || !isfinite(want)) {
      ++bad;
      return;
    }
    const double e = static_cast<double>(got) - want;
    err2 += e * e;
    ref2 += static_cast<double>(want) * want;
    max_err = fmax(max_err, fabs(e));
    max_ref = fmax(max_ref, fabs(static_cast<double>(want)));
  }
};

// Reduces the block's shares and adds them to the device-wide sums.
__device__ void accumulate(CompareSums* sums, const ErrorSums& mine) {
  __shared__ double s_err2[kTile], s_ref2[kTile], s_max_err[kTile], s_max_ref[kTile];
  __shared__ unsigned long long s_bad[kTile];
  const int t = threadIdx.x;
  s_err2[t] = mine.err2, s_ref2[t] = mine.ref2, s_max_err[t] = mine.max_err, s_max_ref[t] = mine.max_ref;
  s_bad[t] = mine.bad;
  __syncthreads();
  for (int w = kTile / 2; w > 0; w /= 2) {
    if (t < w) {
      s_err2[t] += s_err2[t + w];
      s_ref2[t] += s_ref2[t + w];
      s_max_err[t] = fmax(s_max_err[t], s_max_err[t + w]);
      s_max_ref[t] = fmax(s_max_ref[t], s_max_ref[t + w]);
      s_bad[t] += s_bad[t + w];
    }
    __syncthreads();
  }
  if (t == 0) {
    atomicAdd(&sums->err2, s_err2[0]);
    atomicAdd(&sums->ref2, s_ref2[0]);
    atomic_max_nonneg(&sums->max_err, s_max_err[0]);
    atomic_max_nonneg(&sums->max_ref, s_max_ref[0]);
    atomicAdd(&sums->non_finite, s_bad[0]);
  }
}

template <class T>
__global__ void compare_kernel(const T* test, const float* ref, RefAttentionDims d, int64_t heads,
                               const int* positions, CompareSums* sums) {
  const int64_t r = blockIdx.x, b = blockIdx.y, i = positions[r];
  const int64_t width = heads * d.head_dim;
  ErrorSums mine;
  for (int64_t x = threadIdx.x; x < width; x += kTile) {
    mine.add(ld(test, (b * d.seqlen + i) * width + x), ref[(r * d.batch + b) * width + x]);
  }
  accumulate(sums, mine);
}

__global__ void compare_lse_kernel(const float* lse, const float* lse_ref, RefAttentionDims d, const int* positions,
                                   CompareSums* sums) {
  const Index ix{d};
  const int64_t r = blockIdx.x, b = blockIdx.y, i = positions[r];
  ErrorSums mine;
  for (int64_t h = threadIdx.x; h < d.heads; h += kTile) {
    mine.add(lse[ix.stat(b, i, h)], lse_ref[(r * d.batch + b) * d.heads + h]);
  }
  accumulate(sums, mine);
}

template <class F>
void dispatch(Elem e, F f) {
  if (e == Elem::bf16) {
    f(static_cast<const __nv_bfloat16*>(nullptr));
  } else if (e == Elem::f16) {
    f(static_cast<const __half*>(nullptr));
  } else {
    fail_check("reference attention", "element type", "bf16 or fp16 only", __FILE__, __LINE__);
  }
}

dim3 grid(int n, int64_t y, int64_t z) { return dim3(static_cast<unsigned>(n), static_cast<unsigned>(y), static_cast<unsigned>(z)); }

}  // namespace

void ref_attention_forward_rows(Elem e, const void* q, const void* k, const void* v, const RefAttentionDims& d,
                                const int* rows, int n, float* o_ref, float* lse_ref, cudaStream_t s) {
  const size_t smem = (d.head_dim + kTile + 32) * sizeof(float);
  dispatch(e, [&](auto tag) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(tag)>>;
    forward_rows<T><<<grid(n, d.heads, d.batch), kTile, smem, s>>>(
        static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), d, rows, o_ref, lse_ref);
  });
  UB_CUDA_CHECK_LAUNCH();
}

void ref_attention_dq_rows(Elem e, const void* q, const void* k, const void* v, const void* d_o,
                           const RefAttentionDims& d, const int* rows, int n, const float* o_ref,
                           const float* lse_ref, float* dq_ref, cudaStream_t s) {
  const size_t smem = (2 * d.head_dim + kTile + 32) * sizeof(float);
  dispatch(e, [&](auto tag) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(tag)>>;
    dq_rows<T><<<grid(n, d.heads, d.batch), kTile, smem, s>>>(
        static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), static_cast<const T*>(d_o), d,
        rows, o_ref, lse_ref, dq_ref);
  });
  UB_CUDA_CHECK_LAUNCH();
}

void ref_attention_dkv_cols(Elem e, const void* q, const void* k, const void* v, const void* d_o,
                            const RefAttentionDims& d, const int* cols, int n, const float* lse,
                            const float* row_dot, float* dk_ref, float* dv_ref, cudaStream_t s) {
  const size_t smem = (2 * d.head_dim + 2 * kTile) * sizeof(float);
  dispatch(e, [&](auto tag) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(tag)>>;
    dkv_cols<T><<<grid(n, d.kv_heads, d.batch), kTile, smem, s>>>(
        static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), static_cast<const T*>(d_o), d,
        cols, lse, row_dot, dk_ref, dv_ref);
  });
  UB_CUDA_CHECK_LAUNCH();
}

void attention_row_dot(Elem e, const void* d_o, const void* o, const RefAttentionDims& d, float* row_dot,
                       cudaStream_t s) {
  const int64_t warps = d.batch * d.seqlen * d.heads;
  const auto blocks = static_cast<unsigned>((warps * 32 + 255) / 256);
  dispatch(e, [&](auto tag) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(tag)>>;
    row_dot_kernel<T><<<blocks, 256, 0, s>>>(static_cast<const T*>(d_o), static_cast<const T*>(o), d, row_dot);
  });
  UB_CUDA_CHECK_LAUNCH();
}

void compare_sampled(Elem e, const void* test, const float* ref, const RefAttentionDims& d, int64_t heads,
                     const int* positions, int n, CompareSums* sums, cudaStream_t s) {
  dispatch(e, [&](auto tag) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(tag)>>;
    compare_kernel<T><<<grid(n, d.batch, 1), kTile, 0, s>>>(static_cast<const T*>(test), ref, d, heads, positions,
                                                             sums);
  });
  UB_CUDA_CHECK_LAUNCH();
}

void compare_sampled_lse(const float* lse, const float* lse_ref, const RefAttentionDims& d, const int* positions,
                         int n, CompareSums* sums, cudaStream_t s) {
  compare_lse_kernel<<<grid(n, d.batch, 1), kTile, 0, s>>>(lse, lse_ref, d, positions, sums);
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
