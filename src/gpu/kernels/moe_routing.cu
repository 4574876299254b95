// Routing of the mixture-of-experts layer: scores and top-k, the permutation by expert, the
// router's backward and the load-balancing loss; see moe_ops.cuh. Every sum is in a fixed order
// (no atomics on values): the same inputs give the same bits.
#include <cuda_bf16.h>

#include <algorithm>

#include "gpu/check.hpp"
#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/moe_ops.cuh"

namespace ub::gpu {

namespace {

constexpr int kWarp = 32;
constexpr int kPerLane = static_cast<int>(kMaxExperts / kWarp);  // experts a lane holds
constexpr int kChunk = 256;                                      // slots per block of the permutation

unsigned blocks_for_warps(int64_t warps, int warps_per_block) {
  return static_cast<unsigned>((warps + warps_per_block - 1) / warps_per_block);
}

// Lane `lane`'s logits of token `t` (expert lane + 32 j), -inf past E.
__device__ void load_logits(const bf16* logits, int64_t t, int64_t E, int lane, float (&l)[kPerLane]) {
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int64_t e = lane + int64_t{kWarp} * j;
    l[j] = e < E ? __bfloat162float(logits[t * E + e]) : -INFINITY;
  }
}

// softmax over the warp's E logits: max and the sum of exp(l - max).
__device__ float2 softmax_stats(const float (&l)[kPerLane]) {
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) m = fmaxf(m, l[j]);
  m = warp_max(m);
  float z = 0;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) z += l[j] == -INFINITY ? 0.f : expf(l[j] - m);
  return {m, warp_sum(z)};
}

__global__ void route_kernel(const bf16* logits, float* probs, int32_t* chosen, float* weights, int64_t T, int64_t E,
                             int64_t K, bool sigmoid, bool normalize) {
  const int64_t t = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (t >= T) return;
  float l[kPerLane], p[kPerLane];
  load_logits(logits, t, E, lane, l);
  const float2 st = softmax_stats(l);
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int64_t e = lane + int64_t{kWarp} * j;
    p[j] = sigmoid ? 1.f / (1.f + expf(-l[j])) : expf(l[j] - st.x) / st.y;
    if (e < E) probs[t * E + e] = p[j];
  }
  // K rounds of a warp-wide argmax over the logits not taken yet; ties go to the lower expert. A
  // NaN logit (its probabilities are NaN: the loss says so) competes as -inf, so that every
  // chosen expert is one of the E, each once.
  bool taken[kPerLane] = {};
  float sum = 0;
  for (int64_t i = 0; i < K; ++i) {
    float best = -INFINITY;
    int best_e = INT_MAX;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const int e = lane + kWarp * j;
      const float v = isnan(l[j]) ? -INFINITY : l[j];
      if (e < E && !taken[j] && (v > best || (v == best && e < best_e))) best = v, best_e = e;
    }
    for (int o = 16; o > 0; o >>= 1) {
      const float ob = __shfl_xor_sync(0xffffffffu, best, o);
      const int oe = __shfl_xor_sync(0xffffffffu, best_e, o);
      if (ob > best || (ob == best && oe < best_e)) best = ob, best_e = oe;
    }
    float pe = 0;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      if (lane + kWarp * j == best_e) pe = p[j], taken[j] = true;
    }
    pe = warp_sum(pe);
    sum += pe;
    if (lane == 0) chosen[t * K + i] = best_e, weights[t * K + i] = pe;
  }
  if (normalize && lane == 0) {
    for (int64_t i = 0; i < K; ++i) weights[t * K + i] /= sum;
  }
}

// Rows per expert in each chunk of kChunk slots: counts[chunk * E + e].
__global__ void chunk_counts_kernel(const int32_t* chosen, int32_t* counts, int64_t slots, int64_t E) {
  __shared__ int32_t n[kMaxExperts];
  for (int64_t e = threadIdx.x; e < E; e += blockDim.x) n[e] = 0;
  __syncthreads();
  const int64_t slot = blockIdx.x * int64_t{kChunk} + threadIdx.x;
  if (slot < slots) atomicAdd(&n[chosen[slot]], 1);
  __syncthreads();
  for (int64_t e = threadIdx.x; e < E; e += blockDim.x) counts[blockIdx.x * E + e] = n[e];
}

// One block: per expert its total and the first row of its slots in each chunk (in place of the
// chunk's count); offsets are the exclusive prefix sum of the totals.
__global__ void expert_offsets_kernel(int32_t* chunk_rows, int32_t* counts, int32_t* offsets, int64_t chunks, int64_t E) {
  for (int64_t e = threadIdx.x; e < E; e += blockDim.x) {
    int32_t run = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      const int32_t n = chunk_rows[c * E + e];
      chunk_rows[c * E + e] = run;
      run += n;
    }
    counts[e] = run;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int32_t run = 0;
    for (int64_t e = 0; e < E; ++e) offsets[e] = run, run += counts[e];
    offsets[E] = run;
  }
  __syncthreads();
  for (int64_t e = threadIdx.x; e < E; e += blockDim.x) {
    for (int64_t c = 0; c < chunks; ++c) chunk_rows[c * E + e] += offsets[e];
  }
}

// Each slot's row: its chunk's first row for its expert plus the slots of that expert before it
// in the chunk (token order within an expert).
__global__ void place_kernel(const int32_t* chosen, const int32_t* chunk_rows, int32_t* order, int32_t* row_of_slot,
                             int64_t slots, int64_t E) {
  __shared__ int32_t expert[kChunk];
  const int64_t first = blockIdx.x * int64_t{kChunk}, slot = first + threadIdx.x;
  expert[threadIdx.x] = slot < slots ? chosen[slot] : -1;
  __syncthreads();
  if (slot >= slots) return;
  const int32_t e = expert[threadIdx.x];
  int32_t before = 0;
  for (unsigned i = 0; i < threadIdx.x; ++i) before += expert[i] == e;
  const int32_t row = chunk_rows[blockIdx.x * E + e] + before;
  order[row] = static_cast<int32_t>(slot);
  row_of_slot[slot] = row;
}

__global__ void router_backward_kernel(const bf16* logits, const float* probs, const int32_t* chosen,
                                       const float* weights, const float* dweights, const int32_t* counts,
                                       bf16* dlogits, int64_t T, int64_t E, int64_t K, bool sigmoid, bool normalize,
                                       float aux_scale) {
  const int64_t t = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (t >= T) return;
  // dL/dp of the chosen experts (the same on every lane): through the renormalisation when on.
  float chosen_sum = 0, dot_w = 0;
  for (int64_t i = 0; i < K; ++i) {
    chosen_sum += probs[t * E + chosen[t * K + i]];
    dot_w += dweights[t * K + i] * weights[t * K + i];
  }
  float l[kPerLane];
  load_logits(logits, t, E, lane, l);
  const float2 st = softmax_stats(l);
  float g[kPerLane], p[kPerLane], q[kPerLane];
  float pg = 0, cq = 0;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int64_t e = lane + int64_t{kWarp} * j;
    g[j] = 0, p[j] = 0, q[j] = 0;
    if (e >= E) continue;
    for (int64_t i = 0; i < K; ++i) {
      if (chosen[t * K + i] == e) g[j] = normalize ? (dweights[t * K + i] - dot_w) / chosen_sum : dweights[t * K + i];
    }
    p[j] = probs[t * E + e];
    q[j] = sigmoid ? expf(l[j] - st.x) / st.y : p[j];
    pg += p[j] * g[j];
    cq += static_cast<float>(counts[e]) * q[j];
  }
  pg = warp_sum(pg), cq = warp_sum(cq);
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int64_t e = lane + int64_t{kWarp} * j;
    if (e >= E) continue;
    float d = sigmoid ? g[j] * p[j] * (1.f - p[j]) : p[j] * (g[j] - pg);
    d += aux_scale * q[j] * (static_cast<float>(counts[e]) - cq);
    dlogits[t * E + e] = __float2bfloat16(d);
  }
}

// Per token, the max and the sum of exp(l - max) of its logits.
__global__ void softmax_stats_kernel(const bf16* logits, float2* stats, int64_t T, int64_t E) {
  const int64_t t = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / kWarp;
  if (t >= T) return;
  float l[kPerLane];
  load_logits(logits, t, E, threadIdx.x % kWarp, l);
  const float2 st = softmax_stats(l);
  if (threadIdx.x % kWarp == 0) stats[t] = st;
}

// Block e: the sum over tokens of softmax(logits)_e.
__global__ void column_sums_kernel(const bf16* logits, const float2* stats, float* sums, int64_t T, int64_t E) {
  const int64_t e = blockIdx.x;
  float s = 0;
  for (int64_t t = threadIdx.x; t < T; t += blockDim.x) s += expf(__bfloat162float(logits[t * E + e]) - stats[t].x) / stats[t].y;
  s = block_sum(s);
  if (threadIdx.x == 0) sums[e] = s;
}

__global__ void aux_loss_kernel(const int32_t* counts, const float* sums, double* aux, int64_t T, int64_t E) {
  double a = 0;
  for (int64_t e = 0; e < E; ++e) a += static_cast<double>(counts[e]) / T * (static_cast<double>(sums[e]) / T);
  *aux = static_cast<double>(E) * a;
}

void check_experts(int64_t E, int64_t K, const char* what) {
  if (E < 1 || E > kMaxExperts || K < 1 || K > E) {
    throw WorkError(std::string(what) + ": experts must be 1.." + std::to_string(kMaxExperts) +
                    " and experts per token 1..experts (got " + std::to_string(E) + " and " + std::to_string(K) + ")");
  }
}

}  // namespace

void moe_route(const bf16* logits, float* probs, int32_t* chosen, float* weights, int64_t T, int64_t E, int64_t K,
               bool sigmoid, bool normalize, cudaStream_t s) {
  check_experts(E, K, "moe_route");
  if (T == 0) return;
  route_kernel<<<blocks_for_warps(T, 8), 8 * kWarp, 0, s>>>(logits, probs, chosen, weights, T, E, K, sigmoid, normalize);
  UB_CUDA_CHECK_LAUNCH();
}

int64_t moe_permute_scratch_ints(int64_t slots, int64_t E) { return std::max<int64_t>(1, (slots + kChunk - 1) / kChunk) * E; }

void moe_permute(const int32_t* chosen, int32_t* counts, int32_t* offsets, int32_t* order, int32_t* row_of_slot,
                 int32_t* scratch, int64_t slots, int64_t E, cudaStream_t s) {
  check_experts(E, 1, "moe_permute");
  const int64_t chunks = std::max<int64_t>(1, (slots + kChunk - 1) / kChunk);
  chunk_counts_kernel<<<static_cast<unsigned>(chunks), kChunk, 0, s>>>(chosen, scratch, slots, E);
  UB_CUDA_CHECK_LAUNCH();
  expert_offsets_kernel<<<1, kMaxExperts, 0, s>>>(scratch, counts, offsets, chunks, E);
  UB_CUDA_CHECK_LAUNCH();
  place_kernel<<<static_cast<unsigned>(chunks), kChunk, 0, s>>>(chosen, scratch, order, row_of_slot, slots, E);
  UB_CUDA_CHECK_LAUNCH();
}

void moe_router_backward(const bf16* logits, const float* probs, const int32_t* chosen, const float* weights,
                         const float* dweights, const int32_t* counts, bf16* dlogits, int64_t T, int64_t E, int64_t K,
                         bool sigmoid, bool normalize, double aux_coef, cudaStream_t s) {
  check_experts(E, K, "moe_router_backward");
  if (T == 0) return;
  const float aux_scale = static_cast<float>(aux_coef * static_cast<double>(E) / (static_cast<double>(T) * static_cast<double>(T)));
  router_backward_kernel<<<blocks_for_warps(T, 8), 8 * kWarp, 0, s>>>(logits, probs, chosen, weights, dweights, counts,
                                                                       dlogits, T, E, K, sigmoid, normalize, aux_scale);
  UB_CUDA_CHECK_LAUNCH();
}

int64_t moe_aux_scratch_floats(int64_t T, int64_t E) { return (E + 1) / 2 * 2 + 2 * T; }

void moe_aux_loss(const bf16* logits, const int32_t* counts, float* scratch, double* aux, int64_t T, int64_t E,
                  cudaStream_t s) {
  check_experts(E, 1, "moe_aux_loss");
  if (T == 0) return;
  float* sums = scratch;
  float2* stats = reinterpret_cast<float2*>(scratch + ((E + 1) / 2) * 2);  // 8-byte aligned
  softmax_stats_kernel<<<blocks_for_warps(T, 8), 8 * kWarp, 0, s>>>(logits, stats, T, E);
  UB_CUDA_CHECK_LAUNCH();
  column_sums_kernel<<<static_cast<unsigned>(E), 256, 0, s>>>(logits, stats, sums, T, E);
  UB_CUDA_CHECK_LAUNCH();
  aux_loss_kernel<<<1, 1, 0, s>>>(counts, sums, aux, T, E);
  UB_CUDA_CHECK_LAUNCH();
}

}  // namespace ub::gpu
