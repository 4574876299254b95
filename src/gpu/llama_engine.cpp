// The training engine; see llama_engine.hpp. Forward and backward follow
// core/reference/llama_cpu.cpp line for line; the comments name the tensors as it does.
#include "gpu/llama_engine.hpp"

#include <cuda_bf16.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/reference/attention_cpu.hpp"
#include "core/train/rope.hpp"
#include "gpu/attention.hpp"
#include "gpu/check.hpp"
#include "gpu/cuda_raii.hpp"
#include "gpu/device_arena.hpp"
#include "gpu/kernels/llama_ops.cuh"
#include "gpu/linear_gemm.hpp"
#include "gpu/step_profiler.hpp"

namespace ub::gpu {

namespace {

using bf16 = __nv_bfloat16;

// What one layer's backward pass reads (per layer, or one shared set with checkpointing).
struct LayerActivations {
  bf16 *xn1, *q, *k, *v, *o, *a, *xn2, *gu, *h;
  float *rstd1, *rstd2, *stats;
};

}  // namespace

struct LlamaEngine::Impl {
  ModelShape m;
  EngineOptions opt;
  LlamaLayout L;
  cudaStream_t s;
  int64_t T, S, B, H, I, V, nq, nk, d, chunk;
  int64_t q_width() const { return nq * d; }
  int64_t kv_width() const { return nk * d; }
  int64_t qkv_width() const { return q_width() + 2 * kv_width(); }

  DeviceArena arena;
  LinearGemm gemm;
  CudnnAttention attention;
  SdpaDims sdpa;
  double attn_fwd_flop = 0;
  StepProfiler* prof = nullptr;

  // Persistent buffers.
  float* master = nullptr;  // null in pure bf16
  bf16* w16 = nullptr;
  void* grads = nullptr;      // fp32 with master weights, bf16 in pure bf16 (as PyTorch's bf16 model)
  float* norm_acc = nullptr;  // pure bf16: the norm weights' gradients summed in fp32, then cast
  std::vector<size_t> norm_acc_offset;  // per tensor index (norm tensors only)
  int32_t *tok_order = nullptr, *tok_starts = nullptr;  // positions grouped by token (index_tokens)
  void *mom = nullptr, *var = nullptr;
  int32_t* tok = nullptr;
  float *rope_cos = nullptr, *rope_sin = nullptr;
  std::vector<bf16*> x;  // residual stream: x[0] embeddings, x[l + 1] output of layer l
  std::vector<LayerActivations> acts;  // one per layer, or one shared (checkpointing)
  bf16* xf = nullptr;  // final norm output
  float* rstdf = nullptr;
  bf16* dx = nullptr;  // gradient of the residual stream, carried down the layers
  float* row_loss = nullptr;
  double *loss_dev = nullptr, *norm_sq = nullptr;
  int64_t step = 0;
  // The gradient norm is summed on a side stream, tensor by tensor as each gradient becomes
  // final, overlapping the backward pass's GEMMs (memory traffic beside compute-bound work).
  Stream side;
  Event grad_ready, norm_done;
  Event step_start, grads_zeroed;  // the side stream zeroes the accumulated gradients

  Impl(const ModelShape& model, const EngineOptions& o, cudaStream_t stream)
      : m(model), opt(o), L(llama_layout(model)), s(stream), gemm(o.autotune_gemm) {
    check_trainable(m);
    B = o.batch, S = o.seqlen, T = B * S;
    H = m.hidden, I = m.intermediate, V = m.vocab, nq = m.heads, nk = m.kv_heads, d = m.head_dim;
    if (S < 2) throw UsageError(fmt::format("train: sequence length {} is too short (at least 2 tokens)", S));
    if (o.loss_chunk < 0) throw UsageError("train: the loss chunk must not be negative");
    chunk = o.loss_chunk > 0 ? std::min(o.loss_chunk, T) : T;
    sdpa = SdpaDims{B, S, nq, nk, d, true, Dtype::bf16};
    check_sdpa_supported(sdpa, true);
    attn_fwd_flop = attention_flops(AttentionShape{B, S, nq, nk, d, true, {}}, false);
    gemm.set_stream(s);
    attention.set_stream(s);
    plan_memory();
    const RopeTable tab = rope_table(m, S);
    UB_CUDA_CHECK(cudaMemcpyAsync(rope_cos, tab.cos.data(), tab.cos.size() * sizeof(float), cudaMemcpyHostToDevice, s));
    UB_CUDA_CHECK(cudaMemcpyAsync(rope_sin, tab.sin.data(), tab.sin.size() * sizeof(float), cudaMemcpyHostToDevice, s));
    const size_t n = L.total;
    UB_CUDA_CHECK(cudaMemsetAsync(grads, 0, n * grad_bytes(), s));
    UB_CUDA_CHECK(cudaMemsetAsync(mom, 0, n * state_bytes(), s));
    UB_CUDA_CHECK(cudaMemsetAsync(var, 0, n * state_bytes(), s));
    UB_CUDA_CHECK(cudaMemsetAsync(w16, 0, n * sizeof(bf16), s));  // padding stays zero
    if (master) UB_CUDA_CHECK(cudaMemsetAsync(master, 0, n * sizeof(float), s));
    attention.prepare(sdpa, true);
    UB_CUDA_CHECK(cudaStreamSynchronize(s));
  }

  size_t state_bytes() const { return opt.master_weights ? sizeof(float) : sizeof(bf16); }
  bool bf16_grads() const { return !opt.master_weights; }
  size_t grad_bytes() const { return bf16_grads() ? sizeof(bf16) : sizeof(float); }
  Elem grad_elem() const { return bf16_grads() ? Elem::bf16 : Elem::f32; }
  size_t tok_bytes(int64_t width, size_t elem) const { return static_cast<size_t>(T * width) * elem; }
  double act_bytes(int64_t width) const { return static_cast<double>(tok_bytes(width, 2)); }

  void plan_memory() {
    const size_t n = L.total;
    if (opt.master_weights) arena.request("fp32 master weights", n, &master);
    arena.request("bf16 weights", n, &w16);
    arena.request(bf16_grads() ? "bf16 gradients" : "fp32 gradients", n * grad_bytes(), &grads);
    if (bf16_grads()) {
      norm_acc_offset.assign(L.tensors.size(), 0);
      size_t acc = 0;
      for (size_t t = 0; t < L.tensors.size(); ++t) {
        if (L.tensors[t].is_norm) norm_acc_offset[t] = acc, acc += L.tensors[t].count();
      }
      arena.request("fp32 norm gradient sums", acc, &norm_acc);
    }
    arena.request("AdamW first moments", n * state_bytes(), &mom);
    arena.request("AdamW second moments", n * state_bytes(), &var);
    arena.request("token ids", static_cast<size_t>(T), &tok);
    arena.request("positions by token", static_cast<size_t>(T), &tok_order);
    arena.request("token starts", static_cast<size_t>(V + 1), &tok_starts);
    const auto half = static_cast<size_t>(S * (d / 2));
    arena.request("rotary cos table", half, &rope_cos);
    arena.request("rotary sin table", half, &rope_sin);
    x.resize(static_cast<size_t>(m.layers + 1));
    for (int64_t l = 0; l <= m.layers; ++l) {
      arena.request(fmt::format("residual stream {}", l), tok_bytes(H, 2), reinterpret_cast<void**>(&x[static_cast<size_t>(l)]));
    }
    acts.resize(opt.checkpointing ? 1 : static_cast<size_t>(m.layers));
    for (size_t l = 0; l < acts.size(); ++l) {
      LayerActivations& a = acts[l];
      const std::string p = opt.checkpointing ? "recomputed layer " : fmt::format("layer {} ", l);
      auto req = [&](const char* what, int64_t width, bf16** slot) {
        arena.request(p + what, tok_bytes(width, 2), reinterpret_cast<void**>(slot));
      };
      req("input norm output", H, &a.xn1);
      req("rotated queries", q_width(), &a.q);
      req("rotated keys", kv_width(), &a.k);
      req("values", kv_width(), &a.v);
      req("attention output", q_width(), &a.o);
      req("attention residual", H, &a.a);
      req("post-attention norm output", H, &a.xn2);
      req("gate|up projection", 2 * I, &a.gu);
      req("SwiGLU output", I, &a.h);
      arena.request(p + "input norm rstd", static_cast<size_t>(T), &a.rstd1);
      arena.request(p + "post-attention norm rstd", static_cast<size_t>(T), &a.rstd2);
      arena.request(p + "softmax statistics", static_cast<size_t>(B * nq * S), &a.stats);
    }
    arena.request("final norm output", tok_bytes(H, 2), reinterpret_cast<void**>(&xf));
    arena.request("final norm rstd", static_cast<size_t>(T), &rstdf);
    arena.request("residual gradient", tok_bytes(H, 2), reinterpret_cast<void**>(&dx));
    arena.request("per-token loss", static_cast<size_t>(T), &row_loss);
    arena.request("loss", 1, &loss_dev);
    arena.request("gradient norm", 1, &norm_sq);
    // The scratch region: the largest of the phases below.
    const size_t forward = arena_round(tok_bytes(qkv_width(), 2));
    const size_t head = arena_round(static_cast<size_t>(chunk * V) * 2) + arena_round(tok_bytes(H, 2));
    const size_t layer = arena_round(tok_bytes(I, 2)) + arena_round(tok_bytes(2 * I, 2)) +
                         arena_round(tok_bytes(H, 2)) + 2 * arena_round(tok_bytes(q_width(), 2)) +
                         2 * arena_round(tok_bytes(kv_width(), 2)) + arena_round(tok_bytes(qkv_width(), 2));
    arena.commit(std::max({forward, head, layer}));
  }

  // The activations layer l's backward reads (the one shared set with checkpointing).
  const LayerActivations& activations(size_t l) const { return acts[opt.checkpointing ? 0 : l]; }
  const bf16* w(size_t tensor) const { return w16 + L[tensor].offset; }
  void* g(size_t tensor) const { return static_cast<char*>(grads) + L[tensor].offset * grad_bytes(); }
  // Where a norm weight's gradient is summed (fp32): the gradient itself, or its fp32 sum.
  float* norm_grad(size_t tensor) const {
    return bf16_grads() ? norm_acc + norm_acc_offset[tensor] : static_cast<float*>(g(tensor));
  }
  double gemm_flop(int64_t rows, int64_t in, int64_t out) const {
    return 2.0 * static_cast<double>(rows) * static_cast<double>(in) * static_cast<double>(out);
  }
  // Profiling scopes: a GEMM (FLOPs), attention (FLOPs), anything else (bytes moved).
  ProfileScope gemm_scope(const std::string& label, int64_t in, int64_t out, int64_t rows = -1) const {
    return ProfileScope(prof, "gemm", label, gemm_flop(rows < 0 ? T : rows, in, out), 0, s);
  }
  ProfileScope op_scope(const char* cls, const std::string& label, double bytes) const {
    return ProfileScope(prof, cls, label, 0, bytes, s);
  }

  void forward_layer(size_t l, const LayerActivations& A) {
    const LayerParams& lp = L.layers[l];
    {
      auto p = op_scope("norm/elementwise", "rmsnorm fwd", 2 * act_bytes(H));
      rmsnorm_forward(x[l], w(lp.attn_norm), A.xn1, A.rstd1, T, H, m.rms_norm_eps, s);
    }
    {
      DeviceArena::Scratch scratch(arena);
      bf16* qkv = scratch.take<bf16>("qkv projection", static_cast<size_t>(T * qkv_width()));
      {
        auto p = gemm_scope("qkv fwd", H, qkv_width());
        gemm.forward(A.xn1, w(lp.qkv), qkv, nullptr, T, H, qkv_width());
      }
      auto p = op_scope("norm/elementwise", "rope fwd", 2 * act_bytes(qkv_width()));
      rope_forward(qkv, rope_cos, rope_sin, A.q, A.k, A.v, T, S, nq, nk, d, s);
    }
    {
      ProfileScope p(prof, "attention", "attention fwd", attn_fwd_flop, 0, s);
      attention.forward(sdpa, {A.q, A.k, A.v, A.o, A.stats});
    }
    {
      auto p = gemm_scope("o fwd (+residual)", q_width(), H);
      gemm.forward(A.o, w(lp.o), A.a, x[l], T, q_width(), H);  // a = x + o_proj(o)
    }
    {
      auto p = op_scope("norm/elementwise", "rmsnorm fwd", 2 * act_bytes(H));
      rmsnorm_forward(A.a, w(lp.mlp_norm), A.xn2, A.rstd2, T, H, m.rms_norm_eps, s);
    }
    {
      auto p = gemm_scope("gate_up fwd", H, 2 * I);
      gemm.forward(A.xn2, w(lp.gate_up), A.gu, nullptr, T, H, 2 * I);
    }
    {
      auto p = op_scope("norm/elementwise", "swiglu fwd", act_bytes(3 * I));
      swiglu_forward(A.gu, A.h, T, I, s);
    }
    auto p = gemm_scope("down fwd (+residual)", I, H);
    gemm.forward(A.h, w(lp.down), x[l + 1], A.a, T, I, H);  // x = a + down_proj(h)
  }

  // Zero what backward accumulates into (the norm weights' gradients; the embedding's gradient is
  // written whole) on the side stream, after the previous optimizer step has read them.
  void zero_accumulated_gradients() {
    step_start.record(s);
    UB_CUDA_CHECK(cudaStreamWaitEvent(side.get(), step_start.get()));
    for (size_t t = 0; t < L.tensors.size(); ++t) {
      if (L.tensors[t].is_norm) UB_CUDA_CHECK(cudaMemsetAsync(norm_grad(t), 0, L[t].count() * sizeof(float), side.get()));
    }
    grads_zeroed.record(side.get());
  }

  // Tensor `t`'s gradient is final on the main stream: add its squares to the norm, on the side.
  void gradient_final(size_t t) {
    if (bf16_grads() && L[t].is_norm) cast_to_bf16(norm_grad(t), g(t), L[t].count(), s);
    grad_ready.record(s);
    UB_CUDA_CHECK(cudaStreamWaitEvent(side.get(), grad_ready.get()));
    const size_t padded = (L[t].count() + kParamAlign - 1) / kParamAlign * kParamAlign;  // zeros beyond
    accumulate_squares(g(t), bf16_grads(), padded, norm_sq, side.get());
  }

  void forward_backward(const PhaseHook& phase, std::vector<float>* logits_out) {
    UB_CUDA_CHECK(cudaStreamWaitEvent(s, norm_done.get()));  // the previous step's norm is summed
    UB_CUDA_CHECK(cudaMemsetAsync(norm_sq, 0, sizeof(double), s));
    zero_accumulated_gradients();
    {
      auto p = op_scope("norm/elementwise", "embedding fwd", 2 * act_bytes(H));
      embedding_forward(tok, w(L.embed), x[0], T, H, s);
    }
    for (size_t l = 0; l < static_cast<size_t>(m.layers); ++l) forward_layer(l, activations(l));
    {
      auto p = op_scope("norm/elementwise", "rmsnorm fwd", 2 * act_bytes(H));
      rmsnorm_forward(x.back(), w(L.final_norm), xf, rstdf, T, H, m.rms_norm_eps, s);
    }
    UB_CUDA_CHECK(cudaStreamWaitEvent(s, grads_zeroed.get()));  // before the first accumulation
    if (logits_out) logits_out->resize(static_cast<size_t>(T * V));
    {
      DeviceArena::Scratch scratch(arena);
      bf16* dxf = scratch.take<bf16>("final norm gradient", static_cast<size_t>(T * H));
      bf16* logits = scratch.take<bf16>("logits", static_cast<size_t>(chunk * V));
      // lm_head, loss and their backward, `chunk` tokens at a time.
      for (int64_t r0 = 0; r0 < T; r0 += chunk) {
        const int64_t n = std::min(chunk, T - r0);
        {
          auto p = gemm_scope("lm_head fwd", H, V, n);
          gemm.forward(xf + r0 * H, w(L.lm_head), logits, nullptr, n, H, V);
        }
        if (logits_out) copy_logits(logits, n, logits_out->data() + r0 * V);
        {
          auto p = op_scope("cross_entropy", "cross-entropy fwd+bwd", 3.0 * static_cast<double>(n * V) * 2);
          cross_entropy_forward_backward(logits, tok, row_loss, r0, n, S, V, static_cast<double>(B * (S - 1)), s);
        }
        if (phase && r0 == 0) phase("forward");  // the (first chunk's) logits gradient is held
        {
          auto p = gemm_scope("lm_head dgrad", V, H, n);
          gemm.dgrad(logits, w(L.lm_head), dxf + r0 * H, n, H, V);
        }
        auto p = gemm_scope("lm_head wgrad", H, V, n);
        gemm.wgrad(logits, xf + r0 * H, g(L.lm_head), grad_elem(), n, H, V, r0 > 0);  // tied: the embedding's too
      }
      {
        auto p = op_scope("cross_entropy", "loss sum", static_cast<double>(T) * 4);
        sum_loss(row_loss, T, static_cast<double>(B * (S - 1)), loss_dev, s);
      }
      auto p = op_scope("norm/elementwise", "rmsnorm bwd", 3 * act_bytes(H));
      rmsnorm_backward(dxf, x.back(), w(L.final_norm), rstdf, nullptr, dx, norm_grad(L.final_norm), T, H, s);
    }
    if (L.lm_head != L.embed) gradient_final(L.lm_head);
    gradient_final(L.final_norm);
    for (size_t l = static_cast<size_t>(m.layers); l-- > 0;) {
      if (opt.checkpointing) forward_layer(l, activations(l));  // recompute, then go back through it
      backward_layer(l, activations(l));
    }
    {
      const bool tied = L.lm_head == L.embed;  // the lm_head's gradient is already there: add to it
      const double table = static_cast<double>(V * H) * static_cast<double>(grad_bytes());
      auto p = op_scope("norm/elementwise", "embedding bwd", act_bytes(H) + (tied ? 2 : 1) * table);
      embedding_backward(tok_order, tok_starts, dx, g(L.embed), bf16_grads(), tied, V, H, s);
    }
    gradient_final(L.embed);
    norm_done.record(side.get());
    if (phase) phase("backward");
  }

  void copy_logits(const bf16* logits, int64_t n, float* out) {
    const std::vector<float> host = widen(download(logits, static_cast<size_t>(n * V)));
    std::copy(host.begin(), host.end(), out);
  }

  void backward_layer(size_t l, const LayerActivations& A) {
    const LayerParams& lp = L.layers[l];
    DeviceArena::Scratch scratch(arena);
    auto take = [&](const char* what, int64_t width) { return scratch.take<bf16>(what, static_cast<size_t>(T * width)); };
    bf16* dh = take("SwiGLU output gradient", I);
    bf16* dgu = take("gate|up gradient", 2 * I);
    bf16* dxn = take("norm output gradient", H);
    bf16* d_o = take("attention output gradient", q_width());
    bf16* dq = take("query gradient", q_width());
    bf16* dk = take("key gradient", kv_width());
    bf16* dv = take("value gradient", kv_width());
    bf16* dqkv = take("qkv projection gradient", qkv_width());
    // MLP: x = a + down(silu(gate) * up)
    {
      auto p = gemm_scope("down dgrad", H, I);
      gemm.dgrad(dx, w(lp.down), dh, T, I, H);
    }
    {
      auto p = gemm_scope("down wgrad", I, H);
      gemm.wgrad(dx, A.h, g(lp.down), grad_elem(), T, I, H);
    }
    gradient_final(lp.down);
    {
      auto p = op_scope("norm/elementwise", "swiglu bwd", act_bytes(5 * I));
      swiglu_backward(dh, A.gu, dgu, T, I, s);
    }
    {
      auto p = gemm_scope("gate_up dgrad", 2 * I, H);
      gemm.dgrad(dgu, w(lp.gate_up), dxn, T, H, 2 * I);
    }
    {
      auto p = gemm_scope("gate_up wgrad", H, 2 * I);
      gemm.wgrad(dgu, A.xn2, g(lp.gate_up), grad_elem(), T, H, 2 * I);
    }
    gradient_final(lp.gate_up);
    {
      auto p = op_scope("norm/elementwise", "rmsnorm bwd (+residual)", 4 * act_bytes(H));
      rmsnorm_backward(dxn, A.a, w(lp.mlp_norm), A.rstd2, dx, dx, norm_grad(lp.mlp_norm), T, H, s);  // dx := da
    }
    gradient_final(lp.mlp_norm);
    // Attention: a = x + o_proj(attn(rope(q), rope(k), v))
    {
      auto p = gemm_scope("o dgrad", H, q_width());
      gemm.dgrad(dx, w(lp.o), d_o, T, q_width(), H);
    }
    {
      auto p = gemm_scope("o wgrad", q_width(), H);
      gemm.wgrad(dx, A.o, g(lp.o), grad_elem(), T, q_width(), H);
    }
    gradient_final(lp.o);
    {
      ProfileScope p(prof, "attention", "attention bwd", 2.5 * attn_fwd_flop, 0, s);
      attention.backward(sdpa, SdpaTensors{A.q, A.k, A.v, A.o, A.stats, d_o, dq, dk, dv});
    }
    {
      auto p = op_scope("norm/elementwise", "rope bwd", 2 * act_bytes(qkv_width()));
      rope_backward(dq, dk, dv, rope_cos, rope_sin, dqkv, T, S, nq, nk, d, s);
    }
    {
      auto p = gemm_scope("qkv dgrad", qkv_width(), H);
      gemm.dgrad(dqkv, w(lp.qkv), dxn, T, H, qkv_width());
    }
    {
      auto p = gemm_scope("qkv wgrad", H, qkv_width());
      gemm.wgrad(dqkv, A.xn1, g(lp.qkv), grad_elem(), T, H, qkv_width());
    }
    gradient_final(lp.qkv);
    {
      auto p = op_scope("norm/elementwise", "rmsnorm bwd (+residual)", 4 * act_bytes(H));
      rmsnorm_backward(dxn, x[l], w(lp.attn_norm), A.rstd1, dx, dx, norm_grad(lp.attn_norm), T, H, s);  // dx := dx_l
    }
    gradient_final(lp.attn_norm);
  }

  void optimizer_step() {
    ++step;
    const auto n = static_cast<double>(L.total);
    UB_CUDA_CHECK(cudaStreamWaitEvent(s, norm_done.get()));  // the norm, summed during backward
    // Bytes: gradient read; moments read and written; weights read and written (bf16, plus fp32
    // master read and written).
    const double bytes = n * (static_cast<double>(grad_bytes()) + 4 * static_cast<double>(state_bytes()) + (master ? 8 + 2 : 4));
    auto p = op_scope("optimizer", "AdamW", bytes);
    adamw_step(master, w16, grads, bf16_grads(), mom, var, !opt.master_weights, L.total, norm_sq, opt.adam, step, s);
  }

  // `n` elements from the device, after everything queued on the stream (synchronises).
  template <class T>
  std::vector<T> download(const T* src, size_t n) const {
    std::vector<T> host(n);
    UB_CUDA_CHECK(cudaMemcpyAsync(host.data(), src, n * sizeof(T), cudaMemcpyDeviceToHost, s));
    UB_CUDA_CHECK(cudaStreamSynchronize(s));
    return host;
  }
  static std::vector<float> widen(const std::vector<bf16>& v) {
    std::vector<float> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = __bfloat162float(v[i]);
    return out;
  }

  size_t library_bytes() const { return gemm.workspace_bytes() + attention.scratch_bytes(sdpa, true); }
};

LlamaEngine::LlamaEngine(const ModelShape& m, const EngineOptions& o, cudaStream_t stream)
    : impl_(std::make_unique<Impl>(m, o, stream)) {}
LlamaEngine::~LlamaEngine() = default;

const LlamaLayout& LlamaEngine::layout() const { return impl_->L; }
int64_t LlamaEngine::steps_taken() const { return impl_->step; }
void LlamaEngine::set_profiler(StepProfiler* p) { impl_->prof = p; }
const LinearGemm& LlamaEngine::gemm() const { return impl_->gemm; }

void LlamaEngine::init_parameters(uint64_t seed) {
  Impl& e = *impl_;
  for (const ParamTensor& t : e.L.tensors) {
    gpu::init_parameters(e.master, e.w16, t.offset, t.count(), seed, static_cast<float>(kInitStd), t.is_norm, e.s);
  }
  UB_CUDA_CHECK(cudaStreamSynchronize(e.s));
}

void LlamaEngine::set_parameters(const std::vector<float>& flat) {
  Impl& e = *impl_;
  if (flat.size() != e.L.total) throw WorkError(fmt::format("set_parameters: {} values for {}", flat.size(), e.L.total));
  if (e.master) {
    UB_CUDA_CHECK(cudaMemcpyAsync(e.master, flat.data(), flat.size() * sizeof(float), cudaMemcpyHostToDevice, e.s));
    cast_to_bf16(e.master, e.w16, flat.size(), e.s);
  } else {
    std::vector<bf16> h(flat.size());
    for (size_t i = 0; i < h.size(); ++i) h[i] = __float2bfloat16(flat[i]);
    UB_CUDA_CHECK(cudaMemcpyAsync(e.w16, h.data(), h.size() * sizeof(bf16), cudaMemcpyHostToDevice, e.s));
  }
  UB_CUDA_CHECK(cudaStreamSynchronize(e.s));
}

void LlamaEngine::set_tokens(const std::vector<int32_t>& tokens) {
  Impl& e = *impl_;
  if (static_cast<int64_t>(tokens.size()) != e.T) {
    throw WorkError(fmt::format("set_tokens: {} ids for batch {} x seqlen {}", tokens.size(), e.B, e.S));
  }
  const TokenIndex ix = index_tokens(tokens, e.V);  // checks every id against the vocabulary
  UB_CUDA_CHECK(cudaMemcpyAsync(e.tok, tokens.data(), tokens.size() * sizeof(int32_t), cudaMemcpyHostToDevice, e.s));
  UB_CUDA_CHECK(cudaMemcpyAsync(e.tok_order, ix.order.data(), ix.order.size() * sizeof(int32_t), cudaMemcpyHostToDevice, e.s));
  UB_CUDA_CHECK(cudaMemcpyAsync(e.tok_starts, ix.starts.data(), ix.starts.size() * sizeof(int32_t), cudaMemcpyHostToDevice, e.s));
  UB_CUDA_CHECK(cudaStreamSynchronize(e.s));
}

void LlamaEngine::forward_backward(const PhaseHook& phase, std::vector<float>* logits) {
  impl_->forward_backward(phase, logits);
}
void LlamaEngine::optimizer_step() { impl_->optimizer_step(); }
double LlamaEngine::loss() const { return impl_->download(impl_->loss_dev, 1)[0]; }
double LlamaEngine::grad_norm() const { return std::sqrt(impl_->download(impl_->norm_sq, 1)[0]); }

std::vector<float> LlamaEngine::parameters() const {
  const Impl& e = *impl_;
  return e.master ? e.download(e.master, e.L.total) : Impl::widen(e.download(e.w16, e.L.total));
}

std::vector<float> LlamaEngine::gradients() const {
  const Impl& e = *impl_;
  if (e.bf16_grads()) return Impl::widen(e.download(static_cast<const bf16*>(e.grads), e.L.total));
  return e.download(static_cast<const float*>(e.grads), e.L.total);
}

MemorySnapshot LlamaEngine::memory() const {
  const Impl& e = *impl_;
  MemorySnapshot m;
  const size_t lib = e.library_bytes();
  m.allocated = e.arena.persistent_bytes() + e.arena.scratch_in_use() + lib;
  m.reserved = e.arena.reserved() + lib;
  m.peak = e.arena.persistent_bytes() + e.arena.scratch_peak() + lib;
  size_t free_b = 0, total_b = 0;
  UB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  m.device_used = total_b - free_b;
  return m;
}

}  // namespace ub::gpu
