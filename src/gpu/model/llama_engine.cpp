// The training engine's façade: the configuration checked once, the buffers planned, the passes
// built; parameters, tokens and results moved between host and device. See llama_engine.hpp.
#include "gpu/model/llama_engine.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "base/host_memory.hpp"
#include "base/units.hpp"
#include "gpu/check.hpp"
#include "gpu/kernels/llama_ops.cuh"
#include "gpu/model/checkpoint_offload.hpp"
#include "gpu/model/data_parallel.hpp"
#include "gpu/model/host_copies.hpp"
#include "gpu/model/host_optimizer.hpp"
#include "gpu/model/llama_buffers.hpp"
#include "gpu/model/llama_passes.hpp"
#include "gpu/nccl_comm.hpp"
#include "model/rope.hpp"

namespace ub::gpu {

namespace {

const ModelShape& checked(const ModelShape& m, const EngineOptions& o) {
  check_training_step(m, o.batch, o.seqlen, o.loss_chunk);
  check_sdpa_supported(SdpaDims{o.batch, o.seqlen, m.heads, m.kv_heads, m.head_dim, true, Dtype::bf16}, true);
  StepOptions step;
  step.zero = o.zero, step.offload_optimizer = o.offload_optimizer, step.master_weights = o.master_weights;
  step.checkpointing = o.checkpointing, step.selective = o.selective, step.offload_checkpoints = o.offload_checkpoints;
  step.mlp_tile = o.mlp_tile;
  check_step_options(step);
  if (o.data_parallel() && !o.comm) throw UsageError("train: sharding or an offloaded optimizer needs a communicator");
  return m;
}

int world_of(const EngineOptions& o) { return o.comm ? o.comm->world() : 1; }

// The host memory the step will pin, checked against what the host has before anything is
// allocated (base/host_memory.hpp); returns the bytes.
size_t checked_pinned_bytes(const ModelShape& m, const EngineOptions& o, const ShardPlan& plan) {
  std::vector<std::string> what;
  size_t bytes = 0;
  if (o.offload_optimizer) {
    bytes += HostOptimizer::host_bytes(plan);
    what.push_back(fmt::format("the offloaded optimizer ({:.2f} GiB)", to_gib(HostOptimizer::host_bytes(plan))));
  }
  if (o.offload_checkpoints) {
    const StepDims d(m, o);
    const size_t c = CheckpointOffload::host_bytes(d, m.layers);
    bytes += c;
    what.push_back(CheckpointOffload::describe(d, m.layers));
  }
  if (bytes > 0) check_host_memory(bytes, fmt::format("{}", fmt::join(what, " and ")), host_memory_available());
  return bytes;
}

}  // namespace

bool EngineOptions::data_parallel() const { return zero > 0 || offload_optimizer || (comm && comm->world() > 1); }

struct LlamaEngine::Impl {
  ModelShape m;
  EngineOptions opt;
  ShardPlan plan;
  const size_t pinned;  // host bytes
  const LlamaLayout& L;
  cudaStream_t s;
  LlamaBuffers buffers;
  std::unique_ptr<DataParallel> dp;  // null on one GPU without sharding
  std::unique_ptr<CheckpointOffload> offload;  // null unless the checkpoints are offloaded
  LlamaPasses passes;

  Impl(const ModelShape& model, const EngineOptions& o, cudaStream_t stream)
      : m(checked(model, o)), opt(o), plan(plan_shards(m, world_of(opt), opt.data_parallel() ? opt.bucket_elems : 0)),
        pinned(checked_pinned_bytes(m, opt, plan)), L(plan.layout), s(stream), buffers(m, plan, opt),
        dp(opt.data_parallel() ? std::make_unique<DataParallel>(opt, buffers, s) : nullptr),
        offload(opt.offload_checkpoints ? std::make_unique<CheckpointOffload>(buffers, s) : nullptr),
        passes(m, opt, buffers, s, dp.get(), offload.get()) {
    const RopeTable tab = rope_table(m, opt.seqlen);
    upload(buffers.rope_cos, tab.cos, s);
    upload(buffers.rope_sin, tab.sin, s);
    buffers.clear(s);
    UB_CUDA_CHECK(cudaStreamSynchronize(s));
  }
};

LlamaEngine::LlamaEngine(const ModelShape& m, const EngineOptions& o, cudaStream_t stream)
    : impl_(std::make_unique<Impl>(m, o, stream)) {}
LlamaEngine::~LlamaEngine() = default;

const LlamaLayout& LlamaEngine::layout() const { return impl_->L; }
int64_t LlamaEngine::steps_taken() const { return impl_->passes.steps; }
void LlamaEngine::set_profiler(StepProfiler* p) { impl_->passes.profiler = p; }
const LinearGemm& LlamaEngine::gemm() const { return impl_->passes.gemm; }

void LlamaEngine::init_parameters(uint64_t seed) {
  Impl& e = *impl_;
  if (e.dp) return e.dp->init_parameters(seed);
  for (const ParamTensor& t : e.L.tensors) {
    gpu::init_parameters(e.buffers.master ? e.buffers.master + t.offset : nullptr, e.buffers.w16 + t.offset, t.count(),
                         t.init_index, seed, static_cast<float>(kInitStd), t.is_norm, e.s);
  }
  UB_CUDA_CHECK(cudaStreamSynchronize(e.s));
}

void LlamaEngine::set_parameters(const std::vector<float>& flat) {
  Impl& e = *impl_;
  if (e.dp) return e.dp->set_parameters(flat);
  if (flat.size() != e.L.total) throw WorkError(fmt::format("set_parameters: {} values for {}", flat.size(), e.L.total));
  if (e.buffers.master) {
    upload(e.buffers.master, flat, e.s);
    cast_to_bf16(e.buffers.master, e.buffers.w16, flat.size(), e.s);
  } else {
    const std::vector<bf16> h = to_bf16(flat);
    upload(e.buffers.w16, h, e.s);
    UB_CUDA_CHECK(cudaStreamSynchronize(e.s));  // `h` is about to go
  }
  UB_CUDA_CHECK(cudaStreamSynchronize(e.s));
}

void LlamaEngine::set_tokens(const std::vector<int32_t>& tokens) {
  Impl& e = *impl_;
  const StepDims& D = e.buffers.dims;
  if (static_cast<int64_t>(tokens.size()) != D.T) {
    throw WorkError(fmt::format("set_tokens: {} ids for batch {} x seqlen {}", tokens.size(), D.B, D.S));
  }
  const TokenIndex ix = index_tokens(tokens, D.V);  // checks every id against the vocabulary
  upload(e.buffers.tokens, tokens, e.s);
  upload(e.buffers.token_order, ix.order, e.s);
  upload(e.buffers.token_starts, ix.starts, e.s);
  UB_CUDA_CHECK(cudaStreamSynchronize(e.s));
}

void LlamaEngine::forward_backward(const PhaseHook& phase, std::vector<float>* logits) {
  impl_->passes.forward_backward(phase, logits);
}
void LlamaEngine::optimizer_step() { impl_->passes.optimizer_step(); }
double LlamaEngine::loss() const { return download(impl_->buffers.loss, 1, impl_->s)[0] + impl_->passes.aux_loss(); }
const std::vector<int64_t>& LlamaEngine::expert_rows() const { return impl_->passes.expert_rows(); }

std::string LlamaEngine::expert_gemm() const { return impl_->passes.expert_gemm(); }
double LlamaEngine::grad_norm() const { return std::sqrt(download(impl_->buffers.norm_sq, 1, impl_->s)[0]); }

std::vector<float> LlamaEngine::parameters() const {
  const Impl& e = *impl_;
  if (e.dp) return e.dp->assemble(DataParallel::Whole::parameters);
  const size_t n = e.L.total;
  return e.buffers.master ? download(e.buffers.master, n, e.s) : widen(download(e.buffers.w16, n, e.s));
}

std::vector<float> LlamaEngine::gradients() const {
  const Impl& e = *impl_;
  if (e.dp) return e.dp->assemble(DataParallel::Whole::gradients);
  const size_t n = e.L.total;
  return visit(ConstFp32OrBf16(e.buffers.grads), [&](const auto* g) {
    if constexpr (std::is_same_v<decltype(g), const bf16*>) return widen(download(g, n, e.s));
    else return download(g, n, e.s);
  });
}

double LlamaEngine::exposed_comm_ms() const { return impl_->dp ? impl_->dp->exposed_comm_ms() : 0; }
double LlamaEngine::exposed_offload_ms() const { return impl_->dp ? impl_->dp->exposed_offload_ms() : 0; }
double LlamaEngine::exposed_checkpoint_copy_ms() const { return impl_->offload ? impl_->offload->exposed_ms() : 0; }
size_t LlamaEngine::pinned_host_bytes() const { return impl_->pinned; }
const ShardPlan& LlamaEngine::plan() const { return impl_->plan; }

MemorySnapshot LlamaEngine::memory() const {
  const Impl& e = *impl_;
  const DeviceArena& arena = e.buffers.arena;
  const size_t lib = e.passes.gemm.workspace_bytes() + e.passes.attention_scratch_bytes() + e.passes.moe_bytes();
  MemorySnapshot m;
  m.allocated = arena.persistent_bytes() + arena.scratch_in_use() + lib;
  m.reserved = arena.reserved() + lib;
  m.peak = arena.persistent_bytes() + arena.scratch_peak() + lib;
  size_t free_b = 0, total_b = 0;
  UB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  m.device_used = total_b - free_b;
  return m;
}

}  // namespace ub::gpu
