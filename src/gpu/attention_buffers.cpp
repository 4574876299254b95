// Attention buffers; see attention_buffers.hpp.
#include "gpu/attention_buffers.hpp"

#include "gpu/kernels/fill.cuh"

namespace ub::gpu {

namespace {

size_t q_count(const AttentionProblem& p) { return static_cast<size_t>(p.batch * p.seqlen * p.heads * p.head_dim); }
size_t kv_count(const AttentionProblem& p) {
  return static_cast<size_t>(p.batch * p.seqlen * p.kv_heads * p.head_dim);
}
size_t stats_bytes(const AttentionProblem& p) {
  return static_cast<size_t>(p.batch * p.seqlen * p.heads) * sizeof(float);
}
constexpr size_t kElementBytes = 2;  // bf16 and fp16

}  // namespace

AttentionBuffers::AttentionBuffers(const AttentionProblem& p, bool backward) : problem_(p), backward_(backward) {
  const size_t q_bytes = q_count(p) * kElementBytes, kv_bytes = kv_count(p) * kElementBytes;
  q = DeviceBuffer(q_bytes), o = DeviceBuffer(q_bytes);
  k = DeviceBuffer(kv_bytes), v = DeviceBuffer(kv_bytes);
  stats = DeviceBuffer(stats_bytes(p));
  if (backward) {
    d_o = DeviceBuffer(q_bytes), dq = DeviceBuffer(q_bytes);
    dk = DeviceBuffer(kv_bytes), dv = DeviceBuffer(kv_bytes);
  }
}

void AttentionBuffers::fill_random(uint64_t seed, cudaStream_t s) {
  const Elem e = attention_elem(problem_.dtype);
  fill_normal(q.get(), e, q_count(problem_), seed, 1.0f, s);
  fill_normal(k.get(), e, kv_count(problem_), seed + 1, 1.0f, s);
  fill_normal(v.get(), e, kv_count(problem_), seed + 2, 1.0f, s);
  if (backward_) fill_normal(d_o.get(), e, q_count(problem_), seed + 3, 1.0f, s);
}

SdpaTensors AttentionBuffers::tensors() const {
  return {q.get(), k.get(), v.get(), o.get(), stats.as<float>(), d_o.get(), dq.get(), dk.get(), dv.get()};
}

size_t AttentionBuffers::bytes(const AttentionProblem& p, bool backward) {
  const size_t q_bytes = q_count(p) * kElementBytes, kv_bytes = kv_count(p) * kElementBytes;
  // backward: dO and the gradients double the tensors; cuDNN's fp32 dQ accumulator is as large
  // as Q in fp32, its row sums as large as the statistic.
  return (backward ? 4 : 2) * (q_bytes + kv_bytes) + stats_bytes(p) +
         (backward ? 2 * q_bytes + stats_bytes(p) : 0);
}

}  // namespace ub::gpu
