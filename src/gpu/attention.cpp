// cuDNN fused attention graphs; see attention.hpp for the formulas and layouts.
#include "gpu/attention.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "gpu/cudnn_graph.hpp"
#include "gpu/timing.hpp"

namespace ub::gpu {

Elem attention_elem(Dtype d) { return d == Dtype::fp16 ? Elem::f16 : Elem::bf16; }

double SdpaDims::scale() const { return 1.0 / std::sqrt(static_cast<double>(head_dim)); }

namespace {

constexpr size_t kRaggedWideHeadsCudnn = 91900;  // cudnnGetVersion() of 9.19.0

// "9.14.0" for the cuDNN loaded now.
std::string cudnn_version_text() {
  const size_t v = cudnnGetVersion();
  return fmt::format("{}.{}.{}", v / 10000, v % 10000 / 100, v % 100);
}

}  // namespace

void check_sdpa_supported(const SdpaDims& d, bool backward) {
  if (d.dtype != Dtype::bf16 && d.dtype != Dtype::fp16) {
    throw UsageError(fmt::format("attention: dtype {} is not supported (bf16 or fp16)", to_string(d.dtype)));
  }
  if (d.batch < 1 || d.seqlen < 1 || d.heads < 1 || d.kv_heads < 1) {
    throw UsageError("attention: batch, sequence length, heads and kv heads must be positive");
  }
  if (d.heads % d.kv_heads != 0) {
    throw UsageError(fmt::format("attention: {} kv heads do not divide {} query heads", d.kv_heads, d.heads));
  }
  if (d.window < 0 || (d.window > 0 && !d.causal)) {
    throw UsageError(fmt::format("attention: a sliding window of {} tokens: a window is positive and causal", d.window));
  }
  if (d.window > std::numeric_limits<int32_t>::max() - d.seqlen) {
    throw UsageError(fmt::format("attention: a sliding window of {} tokens is past what cuDNN's int32 indices hold", d.window));
  }
  // cuDNN's fused attention on Hopper and Blackwell: head dim a multiple of 8, at most 256.
  if (d.head_dim < 8 || d.head_dim > 256 || d.head_dim % 8 != 0) {
    throw UsageError(fmt::format(
        "attention: head dim {} is not supported by cuDNN's fused attention (a multiple of 8, 8..256)",
        d.head_dim));
  }
  // Measured on an H200 (results/2026-11-30-h200/attention.md): cuDNN 9.14 returns wrong
  // dQ (NMSE 0.05-0.5) for packed documents of different lengths at head dim 256, causal or not,
  // whatever the head grouping; 9.19 is right, and both are right at head dims 64 and 128.
  if (backward && d.ragged && d.head_dim > 128 && cudnnGetVersion() < kRaggedWideHeadsCudnn) {
    throw UsageError(fmt::format(
        "attention: packed documents of different lengths with head dim {} give wrong gradients on cuDNN {} "
        "(measured on 9.14; right on 9.19): load cuDNN 9.19 or later, or pack documents of equal length",
        d.head_dim, cudnn_version_text()));
  }
}

// The ids of a plan's non-virtual tensors, by role.
struct AttentionIds {
  int64_t q = 0, k = 0, v = 0, o = 0, stats = 0, d_o = 0, dq = 0, dk = 0, dv = 0, dot = 0, dq_acc = 0;
  // ragged only: the document lengths (as the query and as the key length) and the offsets
  int64_t seq_q = 0, seq_kv = 0, off_q = 0, off_k = 0, off_v = 0, off_o = 0;
};

namespace {

using Ids = AttentionIds;

cudnnDataType_t cudnn_type(Dtype d) { return d == Dtype::fp16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16; }

struct Dims4 {
  int64_t b, h, hk, s, d;
  explicit Dims4(const SdpaDims& x) : b(x.batch), h(x.heads), hk(x.kv_heads), s(x.seqlen), d(x.head_dim) {}
  // BSHD memory seen as [b, heads, s, d]
  std::vector<int64_t> bhsd_strides(int64_t heads) const { return {s * heads * d, d, heads * d, 1}; }
  // The same memory seen transposed, [b, heads, d, s]
  std::vector<int64_t> bhds_strides(int64_t heads) const { return {s * heads * d, d, 1, heads * d}; }
  std::vector<int64_t> scores() const { return {b, h, s, s}; }
  std::vector<int64_t> scores_strides() const { return {h * s * s, s * s, s, 1}; }
  std::vector<int64_t> scores_t_strides() const { return {h * s * s, s * s, 1, s}; }
  std::vector<int64_t> rows() const { return {b, h, s, 1}; }
  std::vector<int64_t> rows_strides() const { return {h * s, s, 1, 1}; }
};

// S where `keep` holds, -inf elsewhere: what every mask ends with.
GraphTensor keep_or_neg_inf(GraphBuilder& g, const Dims4& x, const GraphTensor& s, const GraphTensor& keep) {
  const GraphTensor neg_inf = g.scalar(-std::numeric_limits<float>::infinity());
  const GraphTensor out = g.virtual_tensor(x.scores(), x.scores_strides());
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, s, &neg_inf, &keep, out);
  return out;
}

// Keeps S[i, j] for j <= i and sets the rest to -inf (top-left aligned causal mask).
GraphTensor causal_mask(GraphBuilder& g, const Dims4& x, const GraphTensor& s) {
  const GraphTensor row = g.virtual_tensor(x.scores(), x.scores_strides(), CUDNN_DATA_INT32);
  const GraphTensor col = g.virtual_tensor(x.scores(), x.scores_strides(), CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, s, nullptr, nullptr, row, CUDNN_DATA_FLOAT, 2);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, s, nullptr, nullptr, col, CUDNN_DATA_FLOAT, 3);
  const GraphTensor keep = g.virtual_tensor(x.scores(), x.scores_strides(), CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_CMP_GE, row, &col, nullptr, keep, CUDNN_DATA_BOOLEAN);
  return keep_or_neg_inf(g, x, s, keep);
}

// Keeps S[i, j] for j > i - w and sets the rest to -inf: with the causal mask before it, query i
// sees itself and the w - 1 keys before (a sliding window, transformers' sliding_window). The
// pattern of cuDNN's own left-bounded diagonal band (its frontend's composite form, before the
// band became one operation in 9.21): col + w > row on int32 indices, then the select.
GraphTensor window_mask(GraphBuilder& g, const Dims4& x, const GraphTensor& s, int64_t window) {
  const GraphTensor row = g.virtual_tensor(x.scores(), x.scores_strides(), CUDNN_DATA_INT32);
  const GraphTensor col = g.virtual_tensor(x.scores(), x.scores_strides(), CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, s, nullptr, nullptr, row, CUDNN_DATA_INT32, 2);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, s, nullptr, nullptr, col, CUDNN_DATA_INT32, 3);
  const GraphTensor w = g.scalar(static_cast<int32_t>(window));
  const GraphTensor col_w = g.virtual_tensor(x.scores(), x.scores_strides(), CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_ADD, col, &w, nullptr, col_w, CUDNN_DATA_INT32);
  const GraphTensor keep = g.virtual_tensor(x.scores(), x.scores_strides(), CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_CMP_GT, col_w, &row, nullptr, keep, CUDNN_DATA_BOOLEAN);
  return keep_or_neg_inf(g, x, s, keep);
}

// The run-time inputs of packed documents of different lengths: each document's length, seen
// once as the query length and once as the key length, and the ragged offsets of the query-like
// (Q, O) and key-like (K, V) tensors; the gradients share their input's offsets.
struct RaggedInputs {
  GraphTensor seq_q, seq_kv, off_q, off_k, off_v, off_o;
  RaggedInputs(GraphBuilder& g, int64_t batch, Ids& ids) {
    const std::vector<int64_t> lens = {batch, 1, 1, 1}, offsets = {batch + 1, 1, 1, 1}, unit = {1, 1, 1, 1};
    seq_q = g.tensor(lens, unit, CUDNN_DATA_INT32);
    seq_kv = g.tensor(lens, unit, CUDNN_DATA_INT32);
    off_q = g.tensor(offsets, unit, CUDNN_DATA_INT32);
    off_k = g.tensor(offsets, unit, CUDNN_DATA_INT32);
    off_v = g.tensor(offsets, unit, CUDNN_DATA_INT32);
    off_o = g.tensor(offsets, unit, CUDNN_DATA_INT32);
    ids.seq_q = seq_q.uid, ids.seq_kv = seq_kv.uid, ids.off_q = off_q.uid, ids.off_k = off_k.uid;
    ids.off_v = off_v.uid, ids.off_o = off_o.uid;
  }
  // Sizes of S = Q K^T (and dP = dO V^T): rows up to the query length, columns up to the key's.
  MatmulSizes scores(bool zero_padding = false) const { return {&seq_q, &seq_kv, nullptr, zero_padding}; }
  // O = P V and dQ = dS K: rows up to the query length, summed over the keys.
  MatmulSizes by_query() const { return {&seq_q, nullptr, &seq_kv}; }
  // dV = P^T dO and dK = dS^T Q: rows up to the key length, summed over the queries.
  MatmulSizes by_key() const { return {&seq_kv, nullptr, &seq_q}; }
};

const GraphTensor* offset(const std::optional<RaggedInputs>& r, const GraphTensor RaggedInputs::*which) {
  return r ? &((*r).*which) : nullptr;
}

MatmulSizes sizes(const std::optional<RaggedInputs>& r, MatmulSizes (RaggedInputs::*which)() const) {
  return r ? ((*r).*which)() : MatmulSizes{};
}

// Keeps S[i, j] for i below the query's document length and j below the key's; -inf elsewhere.
GraphTensor padding_mask(GraphBuilder& g, const Dims4& x, const GraphTensor& s, const RaggedInputs& r) {
  auto index = [&](int64_t axis) {
    const GraphTensor i = g.virtual_tensor(x.scores(), x.scores_strides(), CUDNN_DATA_INT32);
    g.pointwise(CUDNN_POINTWISE_GEN_INDEX, s, nullptr, nullptr, i, CUDNN_DATA_INT32, axis);
    return i;
  };
  auto below = [&](const GraphTensor& i, const GraphTensor& len) {
    const GraphTensor y = g.virtual_tensor(x.scores(), x.scores_strides(), CUDNN_DATA_BOOLEAN);
    g.pointwise(CUDNN_POINTWISE_CMP_LT, i, &len, nullptr, y, CUDNN_DATA_BOOLEAN);
    return y;
  };
  const GraphTensor row_ok = below(index(2), r.seq_q), col_ok = below(index(3), r.seq_kv);
  const GraphTensor keep = g.virtual_tensor(x.scores(), x.scores_strides(), CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_LOGICAL_AND, row_ok, &col_ok, nullptr, keep, CUDNN_DATA_BOOLEAN);
  return keep_or_neg_inf(g, x, s, keep);
}

GraphTensor binary(GraphBuilder& g, cudnnPointwiseMode_t mode, const GraphTensor& a, const GraphTensor& b,
                   std::vector<int64_t> dims, std::vector<int64_t> strides,
                   cudnnDataType_t type = CUDNN_DATA_FLOAT) {
  const GraphTensor y = g.virtual_tensor(std::move(dims), std::move(strides), type);
  g.pointwise(mode, a, &b, nullptr, y);
  return y;
}

GraphTensor unary(GraphBuilder& g, cudnnPointwiseMode_t mode, const GraphTensor& a) {
  const GraphTensor y = g.virtual_tensor(a.dims, a.strides);
  g.pointwise(mode, a, nullptr, nullptr, y);
  return y;
}

// scale * Q K^T, the scores both passes start from; documents of different lengths padded.
GraphTensor scaled_scores(GraphBuilder& g, const Dims4& x, const GraphTensor& q, const GraphTensor& kt,
                          const GraphTensor& scale, const std::optional<RaggedInputs>& r, bool zero_padding) {
  const GraphTensor s = g.virtual_tensor(x.scores(), x.scores_strides());
  g.matmul(q, kt, s, r ? r->scores(zero_padding) : MatmulSizes{});
  const GraphTensor scaled = binary(g, CUDNN_POINTWISE_MUL, s, scale, x.scores(), x.scores_strides());
  return r ? padding_mask(g, x, scaled, *r) : scaled;
}

std::vector<GraphPlan> build_forward(cudnnHandle_t h, const SdpaDims& d, Ids& ids, int candidates) {
  const Dims4 x(d);
  const cudnnDataType_t io = cudnn_type(d.dtype);
  GraphBuilder g(h);
  std::optional<RaggedInputs> r;
  if (d.ragged) r.emplace(g, x.b, ids);
  const GraphTensor q = g.tensor({x.b, x.h, x.s, x.d}, x.bhsd_strides(x.h), io, offset(r, &RaggedInputs::off_q));
  const GraphTensor kt =
      g.tensor({x.b, x.hk, x.d, x.s}, x.bhds_strides(x.hk), io, offset(r, &RaggedInputs::off_k));
  const GraphTensor v = g.tensor({x.b, x.hk, x.s, x.d}, x.bhsd_strides(x.hk), io, offset(r, &RaggedInputs::off_v));
  const GraphTensor o = g.tensor({x.b, x.h, x.s, x.d}, x.bhsd_strides(x.h), io, offset(r, &RaggedInputs::off_o));
  const GraphTensor stats = g.tensor(x.rows(), x.rows_strides(), CUDNN_DATA_FLOAT);
  ids.q = q.uid, ids.k = kt.uid, ids.v = v.uid, ids.o = o.uid, ids.stats = stats.uid;
  const GraphTensor scale = g.scalar(static_cast<float>(d.scale()));

  GraphTensor s = scaled_scores(g, x, q, kt, scale, r, true);
  if (d.causal) s = causal_mask(g, x, s);
  if (d.window > 0) s = window_mask(g, x, s, d.window);
  const GraphTensor m = g.virtual_tensor(x.rows(), x.rows_strides());
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, s, m);
  const GraphTensor e = unary(g, CUDNN_POINTWISE_EXP,
                              binary(g, CUDNN_POINTWISE_SUB, s, m, x.scores(), x.scores_strides()));
  const GraphTensor z = g.virtual_tensor(x.rows(), x.rows_strides());
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, z);
  const GraphTensor log_z = unary(g, CUDNN_POINTWISE_LOG, z);
  g.pointwise(CUDNN_POINTWISE_ADD, m, &log_z, nullptr, stats);
  const GraphTensor p = binary(g, CUDNN_POINTWISE_DIV, e, z, x.scores(), x.scores_strides(), io);
  g.matmul(p, v, o, sizes(r, &RaggedInputs::by_query));
  return g.build_candidates("attention forward", candidates);
}

std::vector<GraphPlan> build_backward(cudnnHandle_t h, const SdpaDims& d, Ids& ids, int candidates) {
  const Dims4 x(d);
  const cudnnDataType_t io = cudnn_type(d.dtype);
  GraphBuilder g(h);
  std::optional<RaggedInputs> r;
  if (d.ragged) r.emplace(g, x.b, ids);
  const GraphTensor* off_q = offset(r, &RaggedInputs::off_q);
  const GraphTensor* off_k = offset(r, &RaggedInputs::off_k);
  const GraphTensor* off_v = offset(r, &RaggedInputs::off_v);
  const GraphTensor* off_o = offset(r, &RaggedInputs::off_o);
  const GraphTensor q = g.tensor({x.b, x.h, x.s, x.d}, x.bhsd_strides(x.h), io, off_q);
  const GraphTensor kt = g.tensor({x.b, x.hk, x.d, x.s}, x.bhds_strides(x.hk), io, off_k);
  const GraphTensor vt = g.tensor({x.b, x.hk, x.d, x.s}, x.bhds_strides(x.hk), io, off_v);
  const GraphTensor o = g.tensor({x.b, x.h, x.s, x.d}, x.bhsd_strides(x.h), io, off_o);
  const GraphTensor d_o = g.tensor({x.b, x.h, x.s, x.d}, x.bhsd_strides(x.h), io, off_o);
  const GraphTensor stats = g.tensor(x.rows(), x.rows_strides(), CUDNN_DATA_FLOAT);
  const GraphTensor dq = g.tensor({x.b, x.h, x.s, x.d}, x.bhsd_strides(x.h), io, off_q);
  const GraphTensor dk = g.tensor({x.b, x.hk, x.s, x.d}, x.bhsd_strides(x.hk), io, off_k);
  const GraphTensor dv = g.tensor({x.b, x.hk, x.s, x.d}, x.bhsd_strides(x.hk), io, off_v);
  // fp32 scratch the fused kernel keeps in memory: rowsum(dO * O), and dQ accumulated in fp32.
  const GraphTensor dot = g.tensor(x.rows(), x.rows_strides(), CUDNN_DATA_FLOAT);
  const GraphTensor dq_acc = g.tensor({x.b, x.h, x.s, x.d}, packed_strides({x.b, x.h, x.s, x.d}), CUDNN_DATA_FLOAT);
  ids.q = q.uid, ids.k = kt.uid, ids.v = vt.uid, ids.o = o.uid, ids.stats = stats.uid, ids.d_o = d_o.uid;
  ids.dq = dq.uid, ids.dk = dk.uid, ids.dv = dv.uid, ids.dot = dot.uid, ids.dq_acc = dq_acc.uid;
  const GraphTensor scale = g.scalar(static_cast<float>(d.scale()));
  const GraphTensor one = g.scalar(1.0f);
  const bool grouped = x.h != x.hk;

  // Ddot = rowsum(dO * O)
  const GraphTensor d_o_o = binary(g, CUDNN_POINTWISE_MUL, d_o, o, {x.b, x.h, x.s, x.d},
                                   {x.h * x.s * x.d, x.s * x.d, x.h * x.d, 1});
  const GraphTensor row_sum = g.virtual_tensor(x.rows(), x.rows_strides());
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, d_o_o, row_sum);
  g.pointwise(CUDNN_POINTWISE_MUL, row_sum, &one, nullptr, dot);

  // P = exp(scale * Q K^T - stats), masked
  GraphTensor s = scaled_scores(g, x, q, kt, scale, r, false);
  s = binary(g, CUDNN_POINTWISE_SUB, s, stats, x.scores(), x.scores_strides());
  if (d.causal) s = causal_mask(g, x, s);
  if (d.window > 0) s = window_mask(g, x, s, d.window);
  const GraphTensor p = unary(g, CUDNN_POINTWISE_EXP, s);

  // dV = P^T dO (summed over each kv head's group of q heads)
  const GraphTensor pt = g.virtual_tensor({x.b, x.h, x.s, x.s}, x.scores_t_strides(), io);
  g.reshape(p, pt);
  const std::vector<int64_t> full = {x.b, x.h, x.s, x.d};
  if (grouped) {
    const GraphTensor dv_full = g.virtual_tensor(full, packed_strides(full), io);
    g.matmul(pt, d_o, dv_full, sizes(r, &RaggedInputs::by_key));
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, dv_full, dv);
  } else {
    g.matmul(pt, d_o, dv, sizes(r, &RaggedInputs::by_key));
  }

  // dS = P * (dO V^T - Ddot) * scale
  GraphTensor dp = g.virtual_tensor(x.scores(), x.scores_strides());
  g.matmul(d_o, vt, dp, r ? r->scores() : MatmulSizes{});
  dp = binary(g, CUDNN_POINTWISE_SUB, dp, dot, x.scores(), x.scores_strides());
  dp = binary(g, CUDNN_POINTWISE_MUL, dp, p, x.scores(), x.scores_strides());
  const GraphTensor ds = binary(g, CUDNN_POINTWISE_MUL, dp, scale, x.scores(), x.scores_strides());

  // dK = dS^T Q
  const GraphTensor dst = g.virtual_tensor({x.b, x.h, x.s, x.s}, x.scores_t_strides(), io);
  g.reshape(ds, dst);
  if (grouped) {
    const GraphTensor dk_full = g.virtual_tensor(full, packed_strides(full), io);
    g.matmul(dst, q, dk_full, sizes(r, &RaggedInputs::by_key));
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, dk_full, dk);
  } else {
    g.matmul(dst, q, dk, sizes(r, &RaggedInputs::by_key));
  }

  // dQ = dS K, accumulated in fp32, then cast
  const GraphTensor k = g.virtual_tensor({x.b, x.hk, x.s, x.d}, x.bhsd_strides(x.hk), io, off_k);
  g.reshape(kt, k);
  g.matmul(ds, k, dq_acc, sizes(r, &RaggedInputs::by_query));
  g.pointwise(CUDNN_POINTWISE_IDENTITY, dq_acc, nullptr, nullptr, dq);
  return g.build_candidates("attention backward", candidates);
}

size_t round_up(size_t n) { return (n + 255) / 256 * 256; }

// Backward's fp32 scratch: rowsum(dO * O) per row, then dQ's fp32 accumulator.
size_t fp32_scratch_bytes(const SdpaDims& d) {
  const auto rows = static_cast<size_t>(d.batch * d.heads * d.seqlen);
  return round_up(rows * sizeof(float)) + round_up(rows * static_cast<size_t>(d.head_dim) * sizeof(float));
}

}  // namespace

// A cached plan: the engine configurations that built (one unless autotuning), the one in use,
// and the ids of the tensors.
struct AttentionPlan {
  std::vector<GraphPlan> candidates;
  size_t chosen = 0;
  bool timed = false;         // the candidates were timed and the fastest chosen
  std::vector<float> time_ms;  // each candidate's median when timed
  AttentionIds ids;
  const GraphPlan& plan() const { return candidates.at(chosen); }
  int64_t workspace_bytes() const {
    int64_t w = 0;
    for (const GraphPlan& c : candidates) w = std::max(w, c.workspace_bytes());
    return w;
  }
};

CudnnAttention::CudnnAttention() : handle_(std::make_unique<CudnnHandle>()) {}
CudnnAttention::~CudnnAttention() = default;

void CudnnAttention::set_stream(cudaStream_t s) {
  handle_->set_stream(s);
  stream_ = s;
}

void CudnnAttention::set_autotune(int candidates) { candidates_ = std::max(1, candidates); }

// Times each candidate of `p` running `run` (3 timed runs after one untimed, the median) and keeps
// the fastest. The candidates compute the same result, so the outputs are those of a real run.
void CudnnAttention::choose_fastest(AttentionPlan& p, const std::function<void(const GraphPlan&)>& run) {
  p.timed = true;
  if (p.candidates.size() < 2) {
    run(p.plan());
    return;
  }
  for (const GraphPlan& candidate : p.candidates) {
    run(candidate);
    const Timing t = time_samples(stream_, nullptr, [&](cudaStream_t) { run(candidate); }, fixed_samples(3));
    p.time_ms.push_back(static_cast<float>(t.summary.median));
  }
  p.chosen = static_cast<size_t>(std::min_element(p.time_ms.begin(), p.time_ms.end()) - p.time_ms.begin());
  run(p.plan());  // leave the chosen one's results in the outputs
}

AttentionPlan& CudnnAttention::plan(const SdpaDims& d, bool backward) {
  auto& cache = backward ? bwd_ : fwd_;
  if (auto it = cache.find(d); it != cache.end()) {
    ++hits_;
    return *it->second;
  }
  check_sdpa_supported(d, backward);
  auto entry = std::make_unique<AttentionPlan>();
  entry->candidates = backward ? build_backward(handle_->get(), d, entry->ids, candidates_)
                               : build_forward(handle_->get(), d, entry->ids, candidates_);
  ++built_;
  return *cache.emplace(d, std::move(entry)).first->second;
}

void CudnnAttention::prepare(const SdpaDims& d, bool backward) {
  plan(d, false);
  if (backward) plan(d, true);
}

void* CudnnAttention::scratch(size_t bytes) {
  if (scratch_.bytes() < bytes) scratch_ = DeviceBuffer(bytes);
  return scratch_.get();
}

const AttentionPlan* CudnnAttention::cached(const SdpaDims& d, bool backward) const {
  const auto& cache = backward ? bwd_ : fwd_;
  auto it = cache.find(d);
  return it == cache.end() ? nullptr : it->second.get();
}

size_t CudnnAttention::scratch_bytes(const SdpaDims& d, bool backward) const {
  const AttentionPlan* p = cached(d, backward);
  const size_t ws = p ? static_cast<size_t>(p->workspace_bytes()) : 0;
  return round_up(ws) + (backward ? fp32_scratch_bytes(d) : 0);
}

std::vector<std::pair<std::string, float>> CudnnAttention::timed_candidates(const SdpaDims& d,
                                                                              bool backward) const {
  std::vector<std::pair<std::string, float>> out;
  const AttentionPlan* p = cached(d, backward);
  if (!p) return out;
  for (size_t i = 0; i < p->time_ms.size(); ++i) out.emplace_back(p->candidates[i].engine(), p->time_ms[i]);
  return out;
}

std::string CudnnAttention::engine(const SdpaDims& d, bool backward) const {
  const AttentionPlan* p = cached(d, backward);
  if (!p) return "";
  return p->candidates.size() > 1 && p->timed
             ? fmt::format("{}, fastest of {} timed", p->plan().engine(), p->candidates.size())
             : p->plan().engine();
}

namespace {

// The run-time inputs of a ragged plan, added to its pointers.
void add_ragged(const SdpaDims& d, const Ids& ids, const SdpaTensors& t, std::map<int64_t, void*>& ptrs) {
  if (!d.ragged) return;
  if (!t.seq_lens || !t.q_offsets || !t.kv_offsets) {
    throw WorkError("attention: documents of different lengths need their lengths and offsets");
  }
  auto* lens = const_cast<int*>(t.seq_lens);
  ptrs[ids.seq_q] = lens, ptrs[ids.seq_kv] = lens;
  ptrs[ids.off_q] = const_cast<int*>(t.q_offsets), ptrs[ids.off_o] = const_cast<int*>(t.q_offsets);
  ptrs[ids.off_k] = const_cast<int*>(t.kv_offsets), ptrs[ids.off_v] = const_cast<int*>(t.kv_offsets);
}

}  // namespace

void CudnnAttention::run(AttentionPlan& p, const std::map<int64_t, void*>& ptrs, void* workspace) {
  auto execute = [&](const GraphPlan& g) { g.execute(handle_->get(), ptrs, workspace); };
  if (p.timed) {
    execute(p.plan());
  } else {
    choose_fastest(p, execute);
  }
}

void CudnnAttention::forward(const SdpaDims& d, const SdpaTensors& t) {
  AttentionPlan& p = plan(d, false);
  const Ids& ids = p.ids;
  void* ws = scratch(scratch_bytes(d, false));
  std::map<int64_t, void*> ptrs = {{ids.q, const_cast<void*>(t.q)}, {ids.k, const_cast<void*>(t.k)},
                                   {ids.v, const_cast<void*>(t.v)}, {ids.o, t.o}, {ids.stats, t.stats}};
  add_ragged(d, ids, t, ptrs);
  run(p, ptrs, ws);
}

void CudnnAttention::backward(const SdpaDims& d, const SdpaTensors& t) {
  AttentionPlan& p = plan(d, true);
  const Ids& ids = p.ids;
  auto* base = static_cast<char*>(scratch(scratch_bytes(d, true)));
  const size_t ws = round_up(static_cast<size_t>(p.workspace_bytes()));
  const auto rows = static_cast<size_t>(d.batch * d.heads * d.seqlen);
  void* dot = base + ws;
  void* dq_acc = base + ws + round_up(rows * sizeof(float));
  std::map<int64_t, void*> ptrs = {
      {ids.q, const_cast<void*>(t.q)}, {ids.k, const_cast<void*>(t.k)}, {ids.v, const_cast<void*>(t.v)},
      {ids.o, t.o}, {ids.stats, t.stats}, {ids.d_o, const_cast<void*>(t.d_o)}, {ids.dq, t.dq},
      {ids.dk, t.dk}, {ids.dv, t.dv}, {ids.dot, dot}, {ids.dq_acc, dq_acc}};
  add_ragged(d, ids, t, ptrs);
  run(p, ptrs, base);
}

}  // namespace ub::gpu
