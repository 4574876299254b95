// The step's order: forward, the head and its backward, the layers back down, the embedding;
// see llama_passes.hpp.
#include "gpu/model/llama_passes.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.hpp"
#include "gpu/check.hpp"
#include "model/reference/attention_cpu.hpp"

namespace ub::gpu {

LlamaPasses::LlamaPasses(const ModelShape& m, const EngineOptions& o, LlamaBuffers& b, cudaStream_t s, DataParallel* dp,
                         CheckpointOffload* offload)
    : gemm(o.autotune_gemm),
      sdpa{b.dims.B, b.dims.S, b.dims.nq, b.dims.nk, b.dims.d, true, Dtype::bf16},
      m_(m), opt_(o), L_(b.layout), b_(b), D_(b.dims), s_(s), dp_(dp), offload_(offload) {
  gemm.set_stream(s);
  attention.set_stream(s);
  for (size_t l = 0; l < static_cast<size_t>(m.layers); ++l) {
    const SdpaDims d = layer_sdpa(l);
    attn_fwd_flop_.push_back(attention_flops(AttentionShape{D_.B, D_.S, D_.nq, D_.nk, D_.d, true, {}, d.window}, false));
    attention.prepare(d, true);
  }
  if (m.moe) {
    const MoeShape& e = *m.moe;
    MoeDims d;
    d.hidden = m.hidden, d.experts = e.experts, d.top_k = e.top_k, d.intermediate = e.intermediate;
    d.shared_intermediate = e.shared_experts * e.shared_intermediate;
    d.sigmoid = e.scoring == RouterScoring::sigmoid, d.normalize = e.normalize_top_k;
    d.shared_expert_gate = e.shared_gate, d.aux_coef = e.aux_loss ? e.aux_loss_coef : 0.0;
    grouped_.emplace();
    grouped_->set_stream(s);
    // Every MoE layer's pass kept when every layer's activations are; one, recomputed before
    // each layer's backward pass, under checkpointing.
    int kept = 0;
    for (const LayerParams& lp : L_.layers) moe_pass_.push_back(lp.moe() && !o.checkpointing ? kept++ : 0);
    moe_.emplace(d, D_.T, gemm, *grouped_, std::max(kept, 1));
    aux_losses_ = DeviceBuffer(static_cast<size_t>(m.layers) * sizeof(double));
    UB_CUDA_CHECK(cudaMemsetAsync(aux_losses_.get(), 0, aux_losses_.bytes(), s));
  }
}

SdpaDims LlamaPasses::layer_sdpa(size_t l) const {
  SdpaDims d = sdpa;
  const int64_t w = m_.window(static_cast<int64_t>(l));
  if (w > 0 && w < D_.S) d.window = w;  // a window of the whole sequence is full attention
  return d;
}

size_t LlamaPasses::attention_scratch_bytes() const {
  size_t most = 0;
  for (size_t l = 0; l < static_cast<size_t>(m_.layers); ++l) most = std::max(most, attention.scratch_bytes(layer_sdpa(l), true));
  return most;
}

void LlamaPasses::forward_backward(const LlamaEngine::PhaseHook& phase, std::vector<float>* logits) {
  const ShardPlan& P = b_.plan;
  const bool tied = L_.lm_head == L_.embed;
  const size_t with_head = tied ? P.embedding_unit() : DataParallel::kNone;  // the head's weights and gradients
  UB_CUDA_CHECK(cudaStreamWaitEvent(s_, norm_done_.get()));  // the previous step's norm is summed
  UB_CUDA_CHECK(cudaMemsetAsync(b_.norm_sq, 0, sizeof(double), s_));
  if (dp_) dp_->begin_step(steps + 1);
  zero_accumulated_gradients();
  expert_rows_.clear();
  forward();
  UB_CUDA_CHECK(cudaStreamWaitEvent(s_, grads_zeroed_.get()));  // before the first accumulation
  if (dp_) {
    dp_->begin_gradients(P.head_unit());
    if (tied) dp_->begin_gradients(P.embedding_unit());
  }
  loss_and_head_backward(phase, logits);
  if (!tied) gradient_final(L_.lm_head);
  gradient_final(L_.final_norm);
  if (dp_) dp_->release(P.head_unit(), with_head);
  for (size_t l = static_cast<size_t>(m_.layers); l-- > 0;) {
    if (dp_) dp_->use(P.layer_unit(l)), dp_->begin_gradients(P.layer_unit(l));
    if (offload_) offload_->before_backward(l);
    if (opt_.checkpointing) forward_layer(l, b_.activations(l), true);  // recompute, then go back through it
    backward_layer(l, b_.activations(l));
    if (offload_) offload_->after_backward(l);
    if (dp_) dp_->release(P.layer_unit(l));
  }
  if (dp_ && !tied) dp_->begin_gradients(P.embedding_unit());
  embedding_backward();
  gradient_final(L_.embed);
  if (dp_) {
    dp_->finish_backward();
    norm_done_.record(s_);
  } else {
    norm_done_.record(side_.get());
  }
  if (phase) phase("backward");
}

double LlamaPasses::gemm_flop(int64_t rows, int64_t in, int64_t out) const {
  return 2.0 * static_cast<double>(rows) * static_cast<double>(in) * static_cast<double>(out);
}

ProfileScope LlamaPasses::gemm_scope(const std::string& label, int64_t in, int64_t out, int64_t rows) const {
  return ProfileScope(profiler, "gemm", label, gemm_flop(rows < 0 ? D_.T : rows, in, out), 0, s_);
}

ProfileScope LlamaPasses::op_scope(const char* cls, const std::string& label, double bytes) const {
  return ProfileScope(profiler, cls, label, 0, bytes, s_);
}

}  // namespace ub::gpu
