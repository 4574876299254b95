// The training step's buffer plan; see llama_buffers.hpp.
#include "gpu/model/llama_buffers.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gpu/check.hpp"
#include "gpu/model/llama_engine.hpp"

namespace ub::gpu {

StepDims::StepDims(const ModelShape& m, const EngineOptions& o)
    : B(o.batch), S(o.seqlen), T(o.batch * o.seqlen), H(m.hidden), I(m.intermediate), V(m.vocab), nq(m.heads),
      nk(m.kv_heads), d(m.head_dim), chunk(o.loss_chunk > 0 ? std::min(o.loss_chunk, o.batch * o.seqlen)
                                                            : o.batch * o.seqlen) {}

LlamaBuffers::LlamaBuffers(const ModelShape& m, const LlamaLayout& L, const EngineOptions& o) : layout(L), dims(m, o) {
  const size_t n = L.total;
  const StepDims& D = dims;
  const Elem grad_elem = o.master_weights ? Elem::f32 : Elem::bf16;  // as PyTorch's bf16 model in pure bf16
  const size_t grad_size = o.master_weights ? sizeof(float) : sizeof(bf16);
  if (o.master_weights) arena.request("fp32 master weights", n, &master);
  arena.request("bf16 weights", n, &w16);
  grads.elem = moments1.elem = moments2.elem = grad_elem;
  arena.request(o.master_weights ? "fp32 gradients" : "bf16 gradients", n * grad_size, &grads.data);
  if (!o.master_weights) {
    norm_sum_offset_.assign(L.tensors.size(), 0);
    size_t acc = 0;
    for (size_t t = 0; t < L.tensors.size(); ++t) {
      if (L.tensors[t].is_norm) norm_sum_offset_[t] = acc, acc += L.tensors[t].count();
    }
    arena.request("fp32 norm gradient sums", acc, &norm_sums);
  }
  arena.request("AdamW first moments", n * grad_size, &moments1.data);
  arena.request("AdamW second moments", n * grad_size, &moments2.data);
  const auto tokens_count = static_cast<size_t>(D.T);
  arena.request("token ids", tokens_count, &tokens);
  arena.request("positions by token", tokens_count, &token_order);
  arena.request("token starts", static_cast<size_t>(D.V + 1), &token_starts);
  const auto half = static_cast<size_t>(D.S * (D.d / 2));
  arena.request("rotary cos table", half, &rope_cos);
  arena.request("rotary sin table", half, &rope_sin);
  x.resize(static_cast<size_t>(m.layers + 1));
  for (int64_t l = 0; l <= m.layers; ++l) {
    arena.request(fmt::format("residual stream {}", l), D.activation_bytes(D.H), reinterpret_cast<void**>(&x[static_cast<size_t>(l)]));
  }
  acts.resize(o.checkpointing ? 1 : static_cast<size_t>(m.layers));
  for (size_t l = 0; l < acts.size(); ++l) {
    LayerActivations& a = acts[l];
    const std::string p = o.checkpointing ? "recomputed layer " : fmt::format("layer {} ", l);
    auto act = [&](const char* what, int64_t width, bf16** slot) {
      arena.request(p + what, D.activation_bytes(width), reinterpret_cast<void**>(slot));
    };
    act("input norm output", D.H, &a.xn1);
    act("rotated queries", D.q_width(), &a.q);
    act("rotated keys", D.kv_width(), &a.k);
    act("values", D.kv_width(), &a.v);
    act("attention output", D.q_width(), &a.o);
    act("attention residual", D.H, &a.a);
    act("post-attention norm output", D.H, &a.xn2);
    act("gate|up projection", 2 * D.I, &a.gu);
    act("SwiGLU output", D.I, &a.h);
    arena.request(p + "input norm rstd", tokens_count, &a.rstd1);
    arena.request(p + "post-attention norm rstd", tokens_count, &a.rstd2);
    arena.request(p + "softmax statistics", static_cast<size_t>(D.B * D.nq * D.S), &a.stats);
  }
  arena.request("final norm output", D.activation_bytes(D.H), reinterpret_cast<void**>(&xf));
  arena.request("final norm rstd", tokens_count, &rstdf);
  arena.request("residual gradient", D.activation_bytes(D.H), reinterpret_cast<void**>(&dx));
  arena.request("per-token loss", tokens_count, &row_loss);
  arena.request("loss", 1, &loss);
  arena.request("gradient norm", 1, &norm_sq);
  // The scratch region: the largest of the phases (forward: the projections before rotary; the
  // head: a loss chunk's logits and the final norm's gradient; a layer's backward gradients).
  const size_t forward = arena_round(D.activation_bytes(D.qkv_width()));
  const size_t head = arena_round(static_cast<size_t>(D.chunk * D.V) * sizeof(bf16)) + arena_round(D.activation_bytes(D.H));
  const size_t layer = arena_round(D.activation_bytes(D.I)) + arena_round(D.activation_bytes(2 * D.I)) +
                       arena_round(D.activation_bytes(D.H)) + 2 * arena_round(D.activation_bytes(D.q_width())) +
                       2 * arena_round(D.activation_bytes(D.kv_width())) + arena_round(D.activation_bytes(D.qkv_width()));
  arena.commit(std::max({forward, head, layer}));
}

void LlamaBuffers::clear(cudaStream_t s) const {
  const size_t n = layout.total;
  UB_CUDA_CHECK(cudaMemsetAsync(grads.data, 0, n * grads.element_bytes(), s));
  UB_CUDA_CHECK(cudaMemsetAsync(moments1.data, 0, n * moments1.element_bytes(), s));
  UB_CUDA_CHECK(cudaMemsetAsync(moments2.data, 0, n * moments2.element_bytes(), s));
  UB_CUDA_CHECK(cudaMemsetAsync(w16, 0, n * sizeof(bf16), s));  // padding stays zero
  if (master) UB_CUDA_CHECK(cudaMemsetAsync(master, 0, n * sizeof(float), s));
}

float* LlamaBuffers::norm_grad(size_t tensor) const {
  return norm_sums ? norm_sums + norm_sum_offset_[tensor] : static_cast<float*>(g(tensor).data);
}

}  // namespace ub::gpu
