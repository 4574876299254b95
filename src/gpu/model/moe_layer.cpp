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

MoeLayer::MoeLayer(const MoeDims& d, int64_t max_tokens, LinearGemm& linear, GroupedGemm& grouped)
    : d_(checked(d, max_tokens)),
      max_tokens_(max_tokens),
      linear_(linear),
      grouped_(grouped),
      host_counts_(static_cast<size_t>(d.experts) * sizeof(int32_t), "the MoE layer's rows per expert") {
  const int64_t T = max_tokens, H = d.hidden, E = d.experts, K = d.top_k, I = d.intermediate,
                Is = d.shared_intermediate, rows = T * K;
  logits_ = of_bf16(T * E), probs_ = of_f32(T * E), chosen_ = of_i32(rows), weights_ = of_f32(rows);
  counts_ = of_i32(E), offsets_ = of_i32(E + 1), order_ = of_i32(rows), row_of_slot_ = of_i32(rows);
  permute_scratch_ = of_i32(moe_permute_scratch_ints(rows, E)), aux_scratch_ = of_f32(moe_aux_scratch_floats(T, E));
  aux_ = DeviceBuffer(sizeof(double));
  xp_ = of_bf16(rows * H), gu_ = of_bf16(rows * 2 * I), act_ = of_bf16(rows * I), yp_ = of_bf16(rows * H);
  dyp_ = of_bf16(rows * H), dweights_ = of_f32(rows), dact_ = of_bf16(rows * I), dgu_ = of_bf16(rows * 2 * I);
  dlogits_ = of_bf16(T * E), dx_router_ = of_bf16(T * H);
  if (Is > 0) {
    shared_gu_ = of_bf16(T * 2 * Is), shared_act_ = of_bf16(T * Is), shared_out_ = of_bf16(T * H);
    dshared_act_ = of_bf16(T * Is), dshared_gu_ = of_bf16(T * 2 * Is), dx_shared_ = of_bf16(T * H);
    if (d.shared_expert_gate) shared_scale_ = of_f32(T), dpre_ = of_f32(T), dshared_out_ = of_bf16(T * H);
  }
}

size_t MoeLayer::device_bytes() const {
  size_t n = 0;
  for (const DeviceBuffer* b : {&logits_, &probs_, &chosen_, &weights_, &counts_, &offsets_, &order_, &row_of_slot_,
                                &permute_scratch_, &aux_scratch_, &aux_, &xp_, &gu_, &act_, &yp_, &shared_gu_,
                                &shared_act_, &shared_out_, &shared_scale_, &dyp_, &dweights_, &dact_, &dgu_, &dlogits_,
                                &dx_router_, &dshared_out_, &dshared_act_, &dshared_gu_, &dx_shared_, &dpre_}) {
    n += b->bytes();
  }
  return n;
}

void MoeLayer::forward(const bf16* x, const MoeLayerWeights& w, const bf16* residual, bf16* out, int64_t T,
                       cudaStream_t s) {
  if (T < 1 || T > max_tokens_) throw WorkError(fmt::format("MoE layer: {} tokens, buffers for 1..{}", T, max_tokens_));
  const int64_t H = d_.hidden, E = d_.experts, K = d_.top_k, I = d_.intermediate, Is = d_.shared_intermediate;
  tokens_ = T, rows_total_ = T * K;
  linear_.set_stream(s), grouped_.set_stream(s);
  linear_.forward(x, w.router, logits_.as<bf16>(), nullptr, T, H, E);
  moe_route(logits_.as<bf16>(), probs_.as<float>(), chosen_.as<int32_t>(), weights_.as<float>(), T, E, K, d_.sigmoid,
            d_.normalize, s);
  moe_permute(chosen_.as<int32_t>(), counts_.as<int32_t>(), offsets_.as<int32_t>(), order_.as<int32_t>(),
              row_of_slot_.as<int32_t>(), permute_scratch_.as<int32_t>(), rows_total_, E, s);
  UB_CUDA_CHECK(cudaMemcpyAsync(host_counts_.as<int32_t>(), counts_.get(), static_cast<size_t>(E) * sizeof(int32_t),
                                cudaMemcpyDeviceToHost, s));
  moe_aux_loss(logits_.as<bf16>(), counts_.as<int32_t>(), aux_scratch_.as<float>(), aux_.as<double>(), T, E, s);
  moe_gather_rows(x, order_.as<int32_t>(), xp_.as<bf16>(), rows_total_, K, H, s);
  UB_CUDA_CHECK(cudaStreamSynchronize(s));  // the grouped GEMMs' sizes
  rows_.assign(host_counts_.as<int32_t>(), host_counts_.as<int32_t>() + E);
  grouped_.forward(xp_.as<bf16>(), w.gate_up, gu_.as<bf16>(), rows_, H, 2 * I);
  swiglu_forward(gu_.as<bf16>(), act_.as<bf16>(), rows_total_, I, s);
  grouped_.forward(act_.as<bf16>(), w.down, yp_.as<bf16>(), rows_, I, H);
  if (Is > 0) {
    linear_.forward(x, w.shared_gate_up, shared_gu_.as<bf16>(), nullptr, T, H, 2 * Is);
    swiglu_forward(shared_gu_.as<bf16>(), shared_act_.as<bf16>(), T, Is, s);
    linear_.forward(shared_act_.as<bf16>(), w.shared_down, shared_out_.as<bf16>(), nullptr, T, Is, H);
    if (d_.shared_expert_gate) moe_shared_gate_forward(x, w.shared_expert_gate, shared_scale_.as<float>(), T, H, s);
  }
  moe_combine(yp_.as<bf16>(), row_of_slot_.as<int32_t>(), weights_.as<float>(), Is > 0 ? shared_out_.as<bf16>() : nullptr,
              d_.shared_expert_gate ? shared_scale_.as<float>() : nullptr, residual, out, T, K, H, s);
}

void MoeLayer::backward(const bf16* x, const MoeLayerWeights& w, const bf16* dout, bf16* dx, const MoeLayerGrads& g,
                        bool accumulate, cudaStream_t s) {
  if (tokens_ == 0) throw WorkError("MoE layer: backward before any forward pass");
  const int64_t T = tokens_, H = d_.hidden, E = d_.experts, K = d_.top_k, I = d_.intermediate,
                Is = d_.shared_intermediate;
  linear_.set_stream(s), grouped_.set_stream(s);
  // The routed experts, from the combine back to their permuted rows.
  moe_combine_backward(dout, yp_.as<bf16>(), row_of_slot_.as<int32_t>(), weights_.as<float>(), dyp_.as<bf16>(),
                       dweights_.as<float>(), T, K, H, s);
  grouped_.dgrad(dyp_.as<bf16>(), w.down, dact_.as<bf16>(), rows_, I, H);
  grouped_.wgrad(dyp_.as<bf16>(), act_.as<bf16>(), g.down, rows_, I, H, accumulate);
  swiglu_backward(dact_.as<bf16>(), gu_.as<bf16>(), dgu_.as<bf16>(), rows_total_, I, s);
  bf16* dxp = dyp_.as<bf16>();  // dyp is read by now: the rows' input gradients go there
  grouped_.dgrad(dgu_.as<bf16>(), w.gate_up, dxp, rows_, H, 2 * I);
  grouped_.wgrad(dgu_.as<bf16>(), xp_.as<bf16>(), g.gate_up, rows_, H, 2 * I, accumulate);
  // The router: the weights' gradients through the scores, plus the load-balancing loss's.
  moe_router_backward(logits_.as<bf16>(), probs_.as<float>(), chosen_.as<int32_t>(), weights_.as<float>(),
                      dweights_.as<float>(), counts_.as<int32_t>(), dlogits_.as<bf16>(), T, E, K, d_.sigmoid,
                      d_.normalize, d_.aux_coef, s);
  linear_.dgrad(dlogits_.as<bf16>(), w.router, dx_router_.as<bf16>(), T, H, E);
  linear_.wgrad(dlogits_.as<bf16>(), x, g.router, T, H, E, accumulate);
  // The shared experts, through their gate when there is one.
  const bf16* dshared = dout;
  if (Is > 0 && d_.shared_expert_gate) {
    if (!accumulate) UB_CUDA_CHECK(cudaMemsetAsync(g.shared_expert_gate, 0, static_cast<size_t>(H) * sizeof(float), s));
    moe_shared_gate_backward(x, shared_out_.as<bf16>(), dout, shared_scale_.as<float>(), dpre_.as<float>(),
                             dshared_out_.as<bf16>(), g.shared_expert_gate, T, H, s);
    dshared = dshared_out_.as<bf16>();
  }
  if (Is > 0) {
    linear_.dgrad(dshared, w.shared_down, dshared_act_.as<bf16>(), T, Is, H);
    linear_.wgrad(dshared, shared_act_.as<bf16>(), g.shared_down, T, Is, H, accumulate);
    swiglu_backward(dshared_act_.as<bf16>(), shared_gu_.as<bf16>(), dshared_gu_.as<bf16>(), T, Is, s);
    linear_.dgrad(dshared_gu_.as<bf16>(), w.shared_gate_up, dx_shared_.as<bf16>(), T, H, 2 * Is);
    linear_.wgrad(dshared_gu_.as<bf16>(), x, g.shared_gate_up, T, H, 2 * Is, accumulate);
  }
  moe_token_grad(dxp, row_of_slot_.as<int32_t>(), dx_router_.as<bf16>(), Is > 0 ? dx_shared_.as<bf16>() : nullptr,
                 Is > 0 && d_.shared_expert_gate ? dpre_.as<float>() : nullptr, w.shared_expert_gate, dx, T, K, H, s);
}

}  // namespace ub::gpu
