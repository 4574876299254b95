// Attention buffers; see attention_buffers.hpp.
#include "gpu/attention_buffers.hpp"

#include <fmt/format.h>

#include <limits>
#include <vector>

#include "base/error.hpp"
#include "facts/packed_docs.hpp"
#include "gpu/kernels/fill.cuh"

namespace ub::gpu {

namespace {

size_t q_count(const AttentionProblem& p) { return static_cast<size_t>(p.batch * p.seqlen * p.heads * p.head_dim); }
size_t kv_count(const AttentionProblem& p) {
  return static_cast<size_t>(p.batch * p.seqlen * p.kv_heads * p.head_dim);
}
// Rows of cuDNN's statistic: [batch * docs, heads, longest document].
size_t stat_rows(const AttentionProblem& p) {
  const SdpaDims d = p.sdpa();
  return static_cast<size_t>(d.batch * d.heads * d.seqlen);
}
size_t stats_bytes(const AttentionProblem& p) { return stat_rows(p) * sizeof(float); }
constexpr size_t kElementBytes = 2;  // bf16 and fp16

DeviceBuffer upload_ints(const std::vector<int64_t>& v, const char* what) {
  std::vector<int> narrow(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] > std::numeric_limits<int>::max()) {
      throw UsageError(fmt::format("attention: the packed buffer is too large for cuDNN's 32-bit {} ({} elements)",
                                   what, v[i]));
    }
    narrow[i] = static_cast<int>(v[i]);
  }
  DeviceBuffer b(narrow.size() * sizeof(int));
  UB_CUDA_CHECK(cudaMemcpy(b.get(), narrow.data(), narrow.size() * sizeof(int), cudaMemcpyHostToDevice));
  return b;
}

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
  if (p.ragged()) {
    // Documents repeat in every batch entry: entry b's documents start b * seqlen tokens later.
    const std::vector<int64_t> starts = document_starts(p.doc_lens);
    std::vector<int64_t> lens, q_off, kv_off;
    for (int64_t b = 0; b < p.batch; ++b) {
      for (size_t i = 0; i < p.doc_lens.size(); ++i) {
        lens.push_back(p.doc_lens[i]);
        q_off.push_back((b * p.seqlen + starts[i]) * p.heads * p.head_dim);
        kv_off.push_back((b * p.seqlen + starts[i]) * p.kv_heads * p.head_dim);
      }
    }
    q_off.push_back(p.batch * p.seqlen * p.heads * p.head_dim);
    kv_off.push_back(p.batch * p.seqlen * p.kv_heads * p.head_dim);
    seq_lens = upload_ints(lens, "sequence lengths");
    q_offsets = upload_ints(q_off, "ragged offsets");
    kv_offsets = upload_ints(kv_off, "ragged offsets");
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
  return {q.get(),  k.get(),  v.get(),  o.get(),           stats.as<float>(),   d_o.get(),
          dq.get(), dk.get(), dv.get(), seq_lens.as<int>(), q_offsets.as<int>(), kv_offsets.as<int>()};
}

size_t AttentionBuffers::bytes(const AttentionProblem& p, bool backward) {
  const size_t q_bytes = q_count(p) * kElementBytes, kv_bytes = kv_count(p) * kElementBytes;
  // backward: dO and the gradients double the tensors; cuDNN's fp32 dQ accumulator has a row of
  // head_dim for each row of the statistic, its row sums are as large as the statistic.
  const size_t dq_acc = stat_rows(p) * static_cast<size_t>(p.head_dim) * sizeof(float);
  return (backward ? 4 : 2) * (q_bytes + kv_bytes) + stats_bytes(p) + (backward ? dq_acc + stats_bytes(p) : 0);
}

}  // namespace ub::gpu
