// Attention validation; see attention_check.hpp.
#include "gpu/attention_check.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "facts/packed_docs.hpp"
#include "gpu/cuda_raii.hpp"
#include "gpu/kernels/attention_ref.cuh"

namespace ub::gpu {

namespace {

constexpr double kLseTolerance = 1e-6;

// Up to `max` positions spread evenly over [0, n), always the first and the last (the rows of a
// causal mask with the fewest and the most keys).
std::vector<int> sample_positions(int64_t n, int max) {
  std::vector<int> p;
  if (n <= max) {
    for (int64_t i = 0; i < n; ++i) p.push_back(static_cast<int>(i));
    return p;
  }
  for (int i = 0; i < max; ++i) p.push_back(static_cast<int>(static_cast<double>(i) * static_cast<double>(n - 1) / (max - 1)));
  p.erase(std::unique(p.begin(), p.end()), p.end());
  return p;
}

DeviceBuffer upload(const std::vector<int>& v, cudaStream_t s) {
  DeviceBuffer b(v.size() * sizeof(int));
  UB_CUDA_CHECK(cudaMemcpyAsync(b.get(), v.data(), v.size() * sizeof(int), cudaMemcpyHostToDevice, s));
  return b;
}

// The reference's document arrays: the document of every position, each document's start.
struct DocumentArrays {
  DeviceBuffer doc_of, doc_start;
  DocumentArrays(const std::vector<int64_t>& lens, int64_t seqlen, cudaStream_t s);
};

DocumentArrays::DocumentArrays(const std::vector<int64_t>& lens, int64_t seqlen, cudaStream_t s) {
  if (lens.empty()) return;
  const std::vector<int64_t> starts = document_starts(lens);
  std::vector<int> of(static_cast<size_t>(seqlen)), start(starts.begin(), starts.end());
  for (size_t k = 0; k < lens.size(); ++k) {
    std::fill(of.begin() + starts[k], of.begin() + starts[k + 1], static_cast<int>(k));
  }
  doc_of = upload(of, s);
  doc_start = upload(start, s);
}

TensorCheck finish(const std::string& name, const CompareSums& c, double tolerance) {
  TensorCheck t;
  t.name = name;
  t.nmse = c.ref2 > 0 ? c.err2 / c.ref2 : (c.err2 > 0 ? 1.0 : 0.0);
  t.max_err = c.max_err;
  t.max_ref = c.max_ref;
  t.non_finite = c.non_finite;
  t.tolerance = tolerance;
  return t;
}

}  // namespace

bool AttentionProblem::ragged() const { return !equal_lengths(doc_lens); }

SdpaDims AttentionProblem::sdpa() const {
  SdpaDims d;
  d.batch = batch * docs();
  d.seqlen = doc_lens.empty() ? seqlen : longest_document(doc_lens);
  d.ragged = ragged();
  d.heads = heads;
  d.kv_heads = kv_heads;
  d.head_dim = head_dim;
  d.causal = causal;
  d.dtype = dtype;
  d.window = window;
  return d;
}

AttentionShape AttentionProblem::shape() const {
  AttentionShape s;
  s.batch = batch, s.seqlen = seqlen, s.heads = heads, s.kv_heads = kv_heads, s.head_dim = head_dim;
  s.causal = causal;
  s.doc_lens = doc_lens;
  s.window = window;
  return s;
}

AttentionCheck check_attention(const AttentionProblem& p, const SdpaTensors& t, bool backward, int max_samples,
                               cudaStream_t s) {
  RefAttentionDims d;
  d.batch = p.batch, d.seqlen = p.seqlen, d.heads = p.heads, d.kv_heads = p.kv_heads, d.head_dim = p.head_dim;
  d.causal = p.causal;
  d.window = p.window;
  const SdpaDims sd = p.sdpa();
  d.scale = static_cast<float>(sd.scale());
  const DocumentArrays documents(p.doc_lens, p.seqlen, s);
  d.doc_of = documents.doc_of.as<int>();
  d.doc_start = documents.doc_start.as<int>();
  d.docs = p.docs();
  d.stat_len = sd.seqlen;
  const Elem e = attention_elem(p.dtype);
  const std::vector<int> rows = sample_positions(p.seqlen, max_samples);
  const int n = static_cast<int>(rows.size());
  const DeviceBuffer rows_d = upload(rows, s);
  const auto per_pos = static_cast<size_t>(p.batch * p.heads * p.head_dim);
  DeviceBuffer o_ref(n * per_pos * sizeof(float));
  DeviceBuffer lse_ref(static_cast<size_t>(n * p.batch * p.heads) * sizeof(float));
  DeviceBuffer sums(5 * sizeof(CompareSums));
  UB_CUDA_CHECK(cudaMemsetAsync(sums.get(), 0, sums.bytes(), s));
  auto* sum = sums.as<CompareSums>();

  ref_attention_forward_rows(e, t.q, t.k, t.v, d, rows_d.as<int>(), n, o_ref.as<float>(), lse_ref.as<float>(), s);
  compare_sampled(e, t.o, o_ref.as<float>(), d, p.heads, rows_d.as<int>(), n, sum + 0, s);
  compare_sampled_lse(t.stats, lse_ref.as<float>(), d, rows_d.as<int>(), n, sum + 1, s);
  AttentionCheck out;
  out.rows = n;
  DeviceBuffer dq_ref, dk_ref, dv_ref, row_dot;
  if (backward) {
    dq_ref = DeviceBuffer(n * per_pos * sizeof(float));
    ref_attention_dq_rows(e, t.q, t.k, t.v, t.d_o, d, rows_d.as<int>(), n, o_ref.as<float>(), lse_ref.as<float>(),
                          dq_ref.as<float>(), s);
    compare_sampled(e, t.dq, dq_ref.as<float>(), d, p.heads, rows_d.as<int>(), n, sum + 2, s);
    // Columns: the same positions, as key indices.
    const auto per_col = static_cast<size_t>(p.batch * p.kv_heads * p.head_dim);
    dk_ref = DeviceBuffer(n * per_col * sizeof(float));
    dv_ref = DeviceBuffer(n * per_col * sizeof(float));
    row_dot = DeviceBuffer(static_cast<size_t>(sd.batch * sd.seqlen * p.heads) * sizeof(float));
    attention_row_dot(e, t.d_o, t.o, d, row_dot.as<float>(), s);
    ref_attention_dkv_cols(e, t.q, t.k, t.v, t.d_o, d, rows_d.as<int>(), n, t.stats, row_dot.as<float>(),
                           dk_ref.as<float>(), dv_ref.as<float>(), s);
    compare_sampled(e, t.dk, dk_ref.as<float>(), d, p.kv_heads, rows_d.as<int>(), n, sum + 3, s);
    compare_sampled(e, t.dv, dv_ref.as<float>(), d, p.kv_heads, rows_d.as<int>(), n, sum + 4, s);
    out.cols = n;
  }
  CompareSums host[5];
  UB_CUDA_CHECK(cudaMemcpyAsync(host, sums.get(), sizeof host, cudaMemcpyDeviceToHost, s));
  UB_CUDA_CHECK(cudaStreamSynchronize(s));
  const double tol = attention_tolerance(p.dtype);
  out.tensors.push_back(finish("O", host[0], tol));
  out.tensors.push_back(finish("LSE", host[1], kLseTolerance));
  if (backward) {
    out.tensors.push_back(finish("dQ", host[2], tol));
    out.tensors.push_back(finish("dK", host[3], tol));
    out.tensors.push_back(finish("dV", host[4], tol));
  }
  return out;
}

}  // namespace ub::gpu
