// The mixture-of-experts layer's forward and backward passes; see moe_layer.hpp.
#include "gpu/model/moe_layer.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "gpu/check.hpp"
#include "gpu/kernels/llama_ops.cuh"
#include "gpu/kernels/moe_ops.cuh"

namespace ub::gpu {

namespace {

DeviceBuffer of_bf16(int64_t n) { return DeviceBuffer(static_cast<size_t>(n) * sizeof(bf16)); }
DeviceBuffer of_f32(int64_t n) { return DeviceBuffer(static_cast<size_t>(n) * sizeof(float)); }
DeviceBuffer of_i32(int64_t n) { return DeviceBuffer(static_cast<size_t>(n) * sizeof(int32_t)); }

// The dims, when they are a layer the engine runs.
const MoeDims& checked(const MoeDims& d, int64_t T) {
  const int64_t H = d.hidden, E = d.experts, K = d.top_k, I = d.intermediate, Is = d.shared_intermediate;
  if (T < 1 || H < 1 || I < 1 || Is < 0 || E < 1 || E > kMaxExperts || K < 1 || K > E) {
    throw UsageError(fmt::format("MoE layer: tokens {}, hidden {}, intermediate {}, shared {}, experts {} (1..{}), "
                                 "top-k {} (1..experts) are not a layer the engine runs",
                                 T, H, I, Is, E, kMaxExperts, K));
  }
  if (H % 8 != 0 || I % 8 != 0 || Is % 8 != 0 || E % 8 != 0) {
    throw UsageError(fmt::format("MoE layer: hidden {}, intermediate {}, shared {} and experts {} must be multiples "
                                 "of 8 (16-byte rows)", H, I, Is, E));
  }
  if (T * K > int64_t{1} << 31) throw UsageError(fmt::format("MoE layer: {} tokens x {} experts each is past 2^31 rows", T, K));
  return d;
}

}  // namespace

MoeLayer::MoeLayer(const MoeDims& d, int64_t max_tokens, LinearGemm& linear, GroupedGemm& grouped, int passes)
    : d_(checked(d, max_tokens)),
      max_tokens_(max_tokens),
      linear_(linear),
      grouped_(grouped),
      host_counts_(static_cast<size_t>(d.experts) * sizeof(int32_t), "the MoE layer's rows per expert") {
  if (passes < 1) throw UsageError(fmt::format("MoE layer: {} passes kept (at least 1)", passes));
  const int64_t T = max_tokens, H = d.hidden, E = d.experts, K = d.top_k, I = d.intermediate,
                Is = d.shared_intermediate, rows = T * K;
  passes_.resize(static_cast<size_t>(passes));
  for (Pass& p : passes_) {
    p.logits = of_bf16(T * E), p.probs = of_f32(T * E), p.chosen = of_i32(rows), p.weights = of_f32(rows);
    p.counts = of_i32(E), p.offsets = of_i32(E + 1), p.order = of_i32(rows), p.row_of_slot = of_i32(rows);
    p.aux = DeviceBuffer(sizeof(double));
    p.xp = of_bf16(rows * H), p.gu = of_bf16(rows * 2 * I), p.act = of_bf16(rows * I), p.yp = of_bf16(rows * H);
    if (Is > 0) {
      p.shared_gu = of_bf16(T * 2 * Is), p.shared_act = of_bf16(T * Is), p.shared_out = of_bf16(T * H);
      if (d.shared_expert_gate) p.shared_scale = of_f32(T);
    }
  }
  permute_scratch_ = of_i32(moe_permute_scratch_ints(rows, E)), aux_scratch_ = of_f32(moe_aux_scratch_floats(T, E));
  dyp_ = of_bf16(rows * H), dweights_ = of_f32(rows), dact_ = of_bf16(rows * I), dgu_ = of_bf16(rows * 2 * I);
  dlogits_ = of_bf16(T * E), dx_router_ = of_bf16(T * H);
  if (Is > 0) {
    dshared_act_ = of_bf16(T * Is), dshared_gu_ = of_bf16(T * 2 * Is), dx_shared_ = of_bf16(T * H);
    if (d.shared_expert_gate) dpre_ = of_f32(T), dshared_out_ = of_bf16(T * H);
  }
}

const MoeLayer::Pass& MoeLayer::at(int pass) const {
  if (pass < 0 || pass >= passes()) throw WorkError(fmt::format("MoE layer: pass {} of {} kept", pass, passes()));
  return passes_[static_cast<size_t>(pass)];
}

size_t MoeLayer::device_bytes() const {
  size_t n = 0;
  for (const Pass& p : passes_) {
    for (const DeviceBuffer* b : {&p.logits, &p.probs, &p.chosen, &p.weights, &p.counts, &p.offsets, &p.order,
                                  &p.row_of_slot, &p.aux, &p.xp, &p.gu, &p.act, &p.yp, &p.shared_gu, &p.shared_act,
                                  &p.shared_out, &p.shared_scale}) {
      n += b->bytes();
    }
  }
  for (const DeviceBuffer* b : {&permute_scratch_, &aux_scratch_, &dyp_, &dweights_, &dact_, &dgu_, &dlogits_,
                                &dx_router_, &dshared_out_, &dshared_act_, &dshared_gu_, &dx_shared_, &dpre_}) {
    n += b->bytes();
  }
  return n;
}

void MoeLayer::forward(const bf16* x, const MoeLayerWeights& w, const bf16* residual, bf16* out, int64_t T,
                       cudaStream_t s, int pass) {
  if (T < 1 || T > max_tokens_) throw WorkError(fmt::format("MoE layer: {} tokens, buffers for 1..{}", T, max_tokens_));
  const int64_t H = d_.hidden, E = d_.experts, K = d_.top_k, I = d_.intermediate, Is = d_.shared_intermediate;
  Pass& p = at(pass);
  p.tokens = T, p.rows_total = T * K;
  linear_.set_stream(s), grouped_.set_stream(s);
  linear_.forward(x, w.router, p.logits.as<bf16>(), nullptr, T, H, E);
  moe_route(p.logits.as<bf16>(), p.probs.as<float>(), p.chosen.as<int32_t>(), p.weights.as<float>(), T, E, K, d_.sigmoid,
            d_.normalize, s);
  moe_permute(p.chosen.as<int32_t>(), p.counts.as<int32_t>(), p.offsets.as<int32_t>(), p.order.as<int32_t>(),
              p.row_of_slot.as<int32_t>(), permute_scratch_.as<int32_t>(), p.rows_total, E, s);
  UB_CUDA_CHECK(cudaMemcpyAsync(host_counts_.as<int32_t>(), p.counts.get(), static_cast<size_t>(E) * sizeof(int32_t),
                                cudaMemcpyDeviceToHost, s));
  counts_copied_.record(s);
  moe_aux_loss(p.logits.as<bf16>(), p.counts.as<int32_t>(), aux_scratch_.as<float>(), p.aux.as<double>(), T, E, s);
  moe_gather_rows(x, p.order.as<int32_t>(), p.xp.as<bf16>(), p.rows_total, K, H, s);
  // The grouped GEMMs' sizes: the host waits for the copy alone, the loss and the gather run on.
  UB_CUDA_CHECK(cudaEventSynchronize(counts_copied_.get()));
  p.rows.assign(host_counts_.as<int32_t>(), host_counts_.as<int32_t>() + E);
  grouped_.forward(p.xp.as<bf16>(), w.gate_up, p.gu.as<bf16>(), p.rows, H, 2 * I);
  swiglu_forward(p.gu.as<bf16>(), p.act.as<bf16>(), p.rows_total, I, s);
  grouped_.forward(p.act.as<bf16>(), w.down, p.yp.as<bf16>(), p.rows, I, H);
  if (Is > 0) {
    linear_.forward(x, w.shared_gate_up, p.shared_gu.as<bf16>(), nullptr, T, H, 2 * Is);
    swiglu_forward(p.shared_gu.as<bf16>(), p.shared_act.as<bf16>(), T, Is, s);
    linear_.forward(p.shared_act.as<bf16>(), w.shared_down, p.shared_out.as<bf16>(), nullptr, T, Is, H);
    if (d_.shared_expert_gate) moe_shared_gate_forward(x, w.shared_expert_gate, p.shared_scale.as<float>(), T, H, s);
  }
  moe_combine(p.yp.as<bf16>(), p.row_of_slot.as<int32_t>(), p.weights.as<float>(), Is > 0 ? p.shared_out.as<bf16>() : nullptr,
              d_.shared_expert_gate ? p.shared_scale.as<float>() : nullptr, residual, out, T, K, H, s);
}

void MoeLayer::backward(const bf16* x, const MoeLayerWeights& w, const bf16* dout, bf16* dx, const MoeLayerGrads& g,
                        bool accumulate, cudaStream_t s, int pass) {
  const Pass& p = at(pass);
  if (p.tokens == 0) throw WorkError("MoE layer: backward before any forward pass");
  const int64_t T = p.tokens, H = d_.hidden, E = d_.experts, K = d_.top_k, I = d_.intermediate,
                Is = d_.shared_intermediate;
  linear_.set_stream(s), grouped_.set_stream(s);
  // The routed experts, from the combine back to their permuted rows.
  moe_combine_backward(dout, p.yp.as<bf16>(), p.row_of_slot.as<int32_t>(), p.weights.as<float>(), dyp_.as<bf16>(),
                       dweights_.as<float>(), T, K, H, s);
  grouped_.dgrad(dyp_.as<bf16>(), w.down, dact_.as<bf16>(), p.rows, I, H);
  grouped_.wgrad(dyp_.as<bf16>(), p.act.as<bf16>(), g.down, p.rows, I, H, accumulate);
  swiglu_backward(dact_.as<bf16>(), p.gu.as<bf16>(), dgu_.as<bf16>(), p.rows_total, I, s);
  bf16* dxp = dyp_.as<bf16>();  // dyp is read by now: the rows' input gradients go there
  grouped_.dgrad(dgu_.as<bf16>(), w.gate_up, dxp, p.rows, H, 2 * I);
  grouped_.wgrad(dgu_.as<bf16>(), p.xp.as<bf16>(), g.gate_up, p.rows, H, 2 * I, accumulate);
  // The router: the weights' gradients through the scores, plus the load-balancing loss's.
  moe_router_backward(p.logits.as<bf16>(), p.probs.as<float>(), p.chosen.as<int32_t>(), p.weights.as<float>(),
                      dweights_.as<float>(), p.counts.as<int32_t>(), dlogits_.as<bf16>(), T, E, K, d_.sigmoid,
                      d_.normalize, d_.aux_coef, s);
  linear_.dgrad(dlogits_.as<bf16>(), w.router, dx_router_.as<bf16>(), T, H, E);
  linear_.wgrad(dlogits_.as<bf16>(), x, g.router, T, H, E, accumulate);
  // The shared experts, through their gate when there is one.
  const bf16* dshared = dout;
  if (Is > 0 && d_.shared_expert_gate) {
    if (!accumulate) UB_CUDA_CHECK(cudaMemsetAsync(g.shared_expert_gate, 0, static_cast<size_t>(H) * sizeof(float), s));
    moe_shared_gate_backward(x, p.shared_out.as<bf16>(), dout, p.shared_scale.as<float>(), dpre_.as<float>(),
                             dshared_out_.as<bf16>(), g.shared_expert_gate, T, H, s);
    dshared = dshared_out_.as<bf16>();
  }
  if (Is > 0) {
    linear_.dgrad(dshared, w.shared_down, dshared_act_.as<bf16>(), T, Is, H);
    linear_.wgrad(dshared, p.shared_act.as<bf16>(), g.shared_down, T, Is, H, accumulate);
    swiglu_backward(dshared_act_.as<bf16>(), p.shared_gu.as<bf16>(), dshared_gu_.as<bf16>(), T, Is, s);
    linear_.dgrad(dshared_gu_.as<bf16>(), w.shared_gate_up, dx_shared_.as<bf16>(), T, H, 2 * Is);
    linear_.wgrad(dshared_gu_.as<bf16>(), x, g.shared_gate_up, T, H, 2 * Is, accumulate);
  }
  moe_token_grad(dxp, p.row_of_slot.as<int32_t>(), dx_router_.as<bf16>(), Is > 0 ? dx_shared_.as<bf16>() : nullptr,
                 Is > 0 && d_.shared_expert_gate ? dpre_.as<float>() : nullptr, w.shared_expert_gate, dx, T, K, H, s);
}

}  // namespace ub::gpu
