// The training step's buffer plan; see llama_buffers.hpp.
#include "gpu/model/llama_buffers.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gpu/check.hpp"
#include "gpu/model/checkpoint_offload.hpp"
#include "gpu/model/llama_engine.hpp"

namespace ub::gpu {

namespace {

// Unit slots ZeRO-3 gathers into: the unit in use, the next one (prefetched) and, tied, the
// embedding beside the head (the last use of one slot overlaps the gathering into another).
constexpr size_t kUnitSlots = 3;
// Slice slots of the offloaded optimizer: a reduce-scatter into one while another is copied out.
constexpr size_t kSliceSlots = 3;

}  // namespace

StepDims::StepDims(const ModelShape& m, const EngineOptions& o)
    : B(o.batch), S(o.seqlen), T(o.batch * o.seqlen), H(m.hidden), I(m.intermediate), V(m.vocab), nq(m.heads),
      nk(m.kv_heads), d(m.head_dim),
      chunk(o.loss_chunk > 0 ? std::min(o.loss_chunk, o.batch * o.seqlen) : o.batch * o.seqlen),
      mlp_tile(o.mlp_tile > 0 ? std::min(o.mlp_tile, o.batch * o.seqlen) : o.batch * o.seqlen) {}

LlamaBuffers::LlamaBuffers(const ModelShape& m, const ShardPlan& p, const EngineOptions& o)
    : plan(p), layout(p.layout), dims(m, o), zero(o.data_parallel() ? o.zero : 0) {
  const size_t n = layout.total, shard = plan.shard;
  const StepDims& D = dims;
  const bool offload = o.offload_optimizer;
  const Elem grad_elem = o.master_weights ? Elem::f32 : Elem::bf16;  // as PyTorch's bf16 model in pure bf16
  const size_t grad_size = o.master_weights ? sizeof(float) : sizeof(bf16);
  grads.elem = moments1.elem = moments2.elem = grad_elem;
  const size_t state = zero == 0 ? n : shard;  // master weights and moments
  if (o.master_weights && !offload) arena.request(zero ? "fp32 master weight shard" : "fp32 master weights", state, &master);
  arena.request(zero == 3 ? "bf16 weight shard" : "bf16 weights", zero == 3 ? shard : n, &w16);
  const char* grad_name = o.master_weights ? "fp32 gradients" : "bf16 gradients";
  if (zero <= 1) arena.request(grad_name, n * grad_size, &grads.data);
  else if (!offload) arena.request(fmt::format("{} shard", grad_name), shard * grad_size, &grads.data);
  if (!offload) {
    arena.request(zero ? "AdamW first moment shard" : "AdamW first moments", state * grad_size, &moments1.data);
    arena.request(zero ? "AdamW second moment shard" : "AdamW second moments", state * grad_size, &moments2.data);
  }
  if (zero == 3) {
    unit_slots.resize(kUnitSlots);
    for (size_t i = 0; i < kUnitSlots; ++i) arena.request(fmt::format("gathered unit {}", i), plan.largest_unit, &unit_slots[i]);
  }
  const bool tied = layout.lm_head == layout.embed;
  if (zero >= 2) {
    bucket_slots.resize(2 * plan.most_buckets_per_unit);
    for (size_t i = 0; i < bucket_slots.size(); ++i) {
      arena.request(fmt::format("gradient bucket {}", i), plan.largest_bucket * grad_size, &bucket_slots[i]);
    }
    if (tied) arena.request("tied embedding gradients", plan.units[plan.embedding_unit()].size() * grad_size, &tied_embedding_grads);
    if (offload) {
      slice_slots.resize(kSliceSlots);
      const size_t slice = plan.largest_bucket / static_cast<size_t>(plan.world);
      for (size_t i = 0; i < kSliceSlots; ++i) arena.request(fmt::format("reduced slice {}", i), slice * grad_size, &slice_slots[i]);
    }
  }
  if (!o.master_weights || zero >= 2) {
    fp32_sum_offset_.assign(layout.tensors.size(), 0);
    size_t acc = 0;
    for (size_t t = 0; t < layout.tensors.size(); ++t) {
      if (layout.tensors[t].summed_in_fp32) fp32_sum_offset_[t] = acc, acc += layout.tensors[t].count();
    }
    arena.request("fp32 gradient sums (norm weights, shared-expert gates)", acc, &fp32_sums);
  }
  const auto tokens_count = static_cast<size_t>(D.T);
  arena.request("token ids", tokens_count, &tokens);
  arena.request("positions by token", tokens_count, &token_order);
  arena.request("token starts", static_cast<size_t>(D.V + 1), &token_starts);
  const auto half = static_cast<size_t>(D.S * (D.d / 2));
  arena.request("rotary cos table", half, &rope_cos);
  arena.request("rotary sin table", half, &rope_sin);
  x.assign(static_cast<size_t>(m.layers + 1), nullptr);
  if (o.offload_checkpoints) {  // the layers' inputs in host memory, a few slots here (checkpoint_offload.hpp)
    checkpoint_slots.resize(CheckpointOffload::kSlots);
    for (size_t i = 0; i < CheckpointOffload::kSlots; ++i) {
      arena.request(fmt::format("layer input slot {}", i), D.activation_bytes(D.H), reinterpret_cast<void**>(&checkpoint_slots[i]));
    }
  }
  for (int64_t l = o.offload_checkpoints ? m.layers : 0; l <= m.layers; ++l) {
    arena.request(fmt::format("residual stream {}", l), D.activation_bytes(D.H), reinterpret_cast<void**>(&x[static_cast<size_t>(l)]));
  }
  const bool keep_attention = o.checkpointing && o.selective;
  acts_.resize(o.checkpointing ? 1 : static_cast<size_t>(m.layers));
  // A mixture-of-experts layer's MLP keeps its own buffers (gpu/model/moe_layer.hpp): the dense
  // gate|up and SwiGLU outputs are for dense layers only.
  bool any_dense = false;
  for (int64_t l = 0; l < m.layers; ++l) any_dense = any_dense || !m.is_moe_layer(l);
  for (size_t l = 0; l < acts_.size(); ++l) {
    const bool dense = o.checkpointing ? any_dense : !m.is_moe_layer(static_cast<int64_t>(l));
    LayerActivations& a = acts_[l];
    a = {};
    const std::string prefix = o.checkpointing ? "recomputed layer " : fmt::format("layer {} ", l);
    auto act = [&](const char* what, int64_t width, bf16** slot) {
      arena.request(prefix + what, D.activation_bytes(width), reinterpret_cast<void**>(slot));
    };
    act("input norm output", D.H, &a.xn1);
    if (m.qk_norm) {
      act("queries and keys before QK-norm", D.q_width() + D.kv_width(), &a.qk_raw);
      arena.request(prefix + "QK-norm rstd", static_cast<size_t>(D.T * (D.nq + D.nk)), &a.qk_rstd);
    }
    act("rotated queries", D.q_width(), &a.q);
    act("rotated keys", D.kv_width(), &a.k);
    act("values", D.kv_width(), &a.v);
    if (!keep_attention) act("attention output", D.q_width(), &a.o);
    act("attention residual", D.H, &a.a);
    act("post-attention norm output", D.H, &a.xn2);
    if (dense && !D.mlp_tiled()) {
      act("gate|up projection", 2 * D.I, &a.gu);
      act("SwiGLU output", D.I, &a.h);
    }
    arena.request(prefix + "input norm rstd", tokens_count, &a.rstd1);
    arena.request(prefix + "post-attention norm rstd", tokens_count, &a.rstd2);
    if (!keep_attention) arena.request(prefix + "softmax statistics", static_cast<size_t>(D.B * D.nq * D.S), &a.stats);
  }
  if (keep_attention) {
    kept_o_.resize(static_cast<size_t>(m.layers));
    kept_stats_.resize(static_cast<size_t>(m.layers));
    for (size_t l = 0; l < kept_o_.size(); ++l) {
      arena.request(fmt::format("layer {} attention output (kept)", l), D.activation_bytes(D.q_width()),
                    reinterpret_cast<void**>(&kept_o_[l]));
      arena.request(fmt::format("layer {} softmax statistics (kept)", l), static_cast<size_t>(D.B * D.nq * D.S),
                    &kept_stats_[l]);
    }
  }
  arena.request("final norm output", D.activation_bytes(D.H), reinterpret_cast<void**>(&xf));
  arena.request("final norm rstd", tokens_count, &rstdf);
  arena.request("residual gradient", D.activation_bytes(D.H), reinterpret_cast<void**>(&dx));
  arena.request("per-token loss", tokens_count, &row_loss);
  arena.request("loss", 1, &loss);
  arena.request("gradient norm", 1, &norm_sq);
  // The scratch region: the largest of the phases. Forward: the projections before rotary, then
  // an MLP tile's gate|up and SwiGLU outputs. The head: a loss chunk's logits and the final
  // norm's gradient. A layer's backward: the norm output's gradient, beside either the MLP's
  // gradients (whole, or a tile's with its recomputed gate|up and SwiGLU) or attention's.
  auto bytes = [&](int64_t rows, int64_t width) { return arena_round(static_cast<size_t>(rows * width) * sizeof(bf16)); };
  const size_t mlp_tile = D.mlp_tiled() ? bytes(D.mlp_tile, 2 * D.I) + bytes(D.mlp_tile, D.I) : 0;
  const size_t forward = std::max(bytes(D.T, D.qkv_width()), mlp_tile);
  const size_t head = bytes(D.chunk, D.V) + bytes(D.T, D.H);
  const size_t mlp_backward = D.mlp_tiled() ? 2 * mlp_tile : bytes(D.T, D.I) + bytes(D.T, 2 * D.I);
  const size_t attention_backward = 2 * bytes(D.T, D.q_width()) + 2 * bytes(D.T, D.kv_width()) + bytes(D.T, D.qkv_width());
  // An MoE layer's backward takes the output of its forward run again (its own buffers hold the rest).
  const size_t moe_backward = m.moe ? bytes(D.T, D.H) : 0;
  const size_t layer = bytes(D.T, D.H) + std::max({mlp_backward, attention_backward, moe_backward});
  arena.commit(std::max({forward, head, layer}));

  unit_weights.resize(plan.units.size());
  for (size_t u = 0; u < plan.units.size(); ++u) unit_weights[u] = zero == 3 ? nullptr : w16 + plan.units[u].begin;
  bucket_grads.resize(plan.buckets.size());
  for (size_t b = 0; b < plan.buckets.size(); ++b) {
    bucket_grads[b] = zero <= 1 ? static_cast<char*>(grads.data) + plan.buckets[b].begin * grad_size : nullptr;
  }
}

void LlamaBuffers::clear(cudaStream_t s) const {
  auto zero_out = [&](void* p, size_t bytes) {
    if (p) UB_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, s));
  };
  const size_t gsize = grads.element_bytes();
  const size_t n = layout.total, shard = plan.shard;
  const size_t state = zero == 0 ? n : shard;
  zero_out(grads.data, (zero <= 1 ? n : shard) * gsize);
  zero_out(moments1.data, state * gsize);
  zero_out(moments2.data, state * gsize);
  zero_out(w16, (zero == 3 ? shard : n) * sizeof(bf16));  // padding stays zero
  zero_out(master, state * sizeof(float));
  for (bf16* slot : unit_slots) zero_out(slot, plan.largest_unit * sizeof(bf16));
  for (void* slot : bucket_slots) zero_out(slot, plan.largest_bucket * gsize);
  zero_out(tied_embedding_grads, plan.units[plan.embedding_unit()].size() * gsize);
}

const bf16* LlamaBuffers::w(size_t tensor) const {
  const size_t u = plan.unit_of[tensor];
  const bf16* base = unit_weights[u];
  if (!base) throw WorkError(fmt::format("the weights of {} are not gathered", plan.units[u].name));
  return base + (layout[tensor].offset - plan.units[u].begin);
}

Fp32OrBf16 LlamaBuffers::g(size_t tensor) const {
  const size_t b = plan.bucket_of[tensor];
  void* base = bucket_grads[b];
  if (!base) throw WorkError(fmt::format("the gradient of {} has no buffer yet", layout[tensor].name));
  return Fp32OrBf16(base, grads.elem).at(layout[tensor].offset - plan.buckets[b].begin);
}

float* LlamaBuffers::summed_grad(size_t tensor) const {
  return fp32_sums ? fp32_sums + fp32_sum_offset_[tensor] : static_cast<float*>(g(tensor).data);
}

LayerActivations LlamaBuffers::activations(size_t l) const {
  LayerActivations a = acts_[acts_.size() == 1 ? 0 : l];
  if (!kept_o_.empty()) a.o = kept_o_[l], a.stats = kept_stats_[l];
  return a;
}

}  // namespace ub::gpu
