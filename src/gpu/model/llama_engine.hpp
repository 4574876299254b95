// The training step of a Llama-family decoder on one GPU: our kernels (gpu/kernels/llama_ops),
// cuBLASLt for the linear layers (gpu/linear_gemm.hpp) and cuDNN's fused attention
// (gpu/attention.hpp), in the order and with the formulas of the CPU reference
// (model/reference/llama_cpu.hpp), which the GPU tests hold it to.
//
// Precision: bf16 activations and compute weights, fp32 accumulation in every GEMM, reduction and
// softmax. With master weights (the default, DeepSpeed's bf16 mode) the gradients are fp32 and
// the optimizer keeps fp32 weights and fp32 AdamW moments and rewrites the bf16 copy each step;
// pure bf16 keeps bf16 weights, bf16 gradients and bf16 moments (as PyTorch's AdamW on a bf16
// model); sums across tokens (the norm weights', the embedding's) are fp32 before their rounding.
//
// Memory: one arena planned in the constructor (gpu/model/llama_buffers.hpp says what lives
// where); cuBLASLt's workspace and cuDNN's workspace are the only other device allocations.
// Options that trade time for memory:
//   activation checkpointing: only each layer's input is kept; the backward pass recomputes the
//     layer's forward into one shared set of activation buffers before going back through it;
//   offloaded checkpoints: those kept inputs in pinned host memory, a few of them on the GPU;
//   loss chunks: the lm_head, the cross-entropy and their backward run `loss_chunk` tokens at a
//     time, so the vocab x tokens logits tensor is never whole (the fused cross-entropy of the
//     ml-engineering guide's recipe).
// The passes (forward, loss, backward, optimizer) are gpu/model/llama_passes.hpp.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "facts/model_shape.hpp"
#include "model/llama_layout.hpp"
#include "model/shard_plan.hpp"
#include "model/train_math.hpp"

namespace ub::gpu {

class StepProfiler;
class LinearGemm;
class NcclComm;

struct EngineOptions {
  int64_t batch = 1, seqlen = 0;
  bool master_weights = true;
  bool checkpointing = false;
  // With checkpointing: keep each layer's attention output and softmax statistics, so the
  // recompute skips attention (the expensive part at long sequences) and redoes the cheap rest.
  bool selective = false;
  // With checkpointing: the layers' kept inputs in pinned host memory, copied out as the forward
  // pass writes them and back one layer ahead of the backward pass (gpu/model/checkpoint_offload.hpp).
  bool offload_checkpoints = false;
  int64_t mlp_tile = 0;    // tokens per MLP tile (gate_up, SwiGLU, down run tile by tile); 0: all at once
  int64_t loss_chunk = 0;  // tokens per lm_head + cross-entropy chunk; 0: all at once
  bool autotune_gemm = true;  // time cuBLASLt's top algorithms per shape on first use
  AdamWParams adam;
  // Data parallelism (gpu/model/data_parallel.hpp): the job's communicator, one rank per GPU
  // (null: this GPU alone), the ZeRO stage (0..3), the elements per communication bucket (0: one
  // bucket per unit), and AdamW on host threads with its state in host memory.
  NcclComm* comm = nullptr;
  int zero = 0;
  size_t bucket_elems = 0;
  bool offload_optimizer = false;
  int host_threads = 0;  // offloaded AdamW's host threads (0: every core)
  // Whether the step runs through the data-parallel layer (collectives, shards or host state).
  bool data_parallel() const;
};

struct MemorySnapshot {
  size_t allocated = 0;  // bytes in use now (persistent + scratch in use + library workspaces)
  size_t reserved = 0;   // bytes allocated from the device by the engine
  size_t peak = 0;       // the most ever in use
  size_t device_used = 0;  // the device's own count (cudaMemGetInfo): includes the CUDA context
};

class LlamaEngine {
 public:
  // Checks the configuration (model/llama_layout.hpp's check_training_step, cuDNN's support) and
  // the host memory it will pin (base/host_memory.hpp), then plans and allocates everything;
  // throws OutOfMemory (gpu/device_arena.hpp) naming what did not fit, WorkError for host memory
  // short, UsageError for a model or a step the engine cannot run.
  LlamaEngine(const ModelShape& m, const EngineOptions& o, cudaStream_t stream);
  ~LlamaEngine();
  LlamaEngine(const LlamaEngine&) = delete;
  LlamaEngine& operator=(const LlamaEngine&) = delete;

  const LlamaLayout& layout() const;

  void init_parameters(uint64_t seed);
  void set_parameters(const std::vector<float>& flat);  // fp32, layout().total elements
  void set_tokens(const std::vector<int32_t>& tokens);  // batch * seqlen ids, each < vocab

  // Forward, loss and backward, leaving the gradients; `phase` is called after the forward pass
  // ("forward", the logits' gradient still held) and after the backward pass ("backward").
  // `logits` (tests): the logits before the loss, copied to the host.
  using PhaseHook = std::function<void(const char* phase)>;
  void forward_backward(const PhaseHook& phase = {}, std::vector<float>* logits = nullptr);
  // Clip by global norm and one AdamW step. The norm is summed during the backward pass on a
  // side stream, each tensor as soon as its gradient is final.
  void optimizer_step();

  double loss() const;        // of the last forward, with MoE layers' load-balancing losses (synchronises)
  // Of the last forward pass, a mixture of experts: each MoE layer's rows per expert, layer after
  // layer (empty for a dense model).
  const std::vector<int64_t>& expert_rows() const;
  // The library the experts' products went through (GroupedGemm::library()); empty for a dense model.
  std::string expert_gemm() const;
  double grad_norm() const;   // before clipping, of the last optimizer step (synchronises)
  int64_t steps_taken() const;
  // The whole parameters and gradients (the averaged ones with data parallelism), fp32 in the
  // plan's layout; with data parallelism every rank must call them together (they gather shards).
  std::vector<float> parameters() const;  // fp32 (the master weights, or the bf16 weights widened)
  std::vector<float> gradients() const;
  // Of the last step (synchronises; 0 on one GPU without sharding): milliseconds the compute
  // stream waited for communication, and for the offloaded optimizer.
  double exposed_comm_ms() const;
  double exposed_offload_ms() const;
  // Of the last step (synchronises): milliseconds the compute stream waited for the offloaded
  // checkpoints' copies (0 without them).
  double exposed_checkpoint_copy_ms() const;
  // Host memory the engine holds pinned: the offloaded optimizer's state, the offloaded checkpoints.
  size_t pinned_host_bytes() const;
  // Units, buckets and shards (model/shard_plan.hpp); its layout is layout().
  const ShardPlan& plan() const;
  MemorySnapshot memory() const;
  // Operations of the following steps are timed into `p` (null: none).
  void set_profiler(StepProfiler* p);
  // The GEMM plans built so far and the algorithm each kept.
  const LinearGemm& gemm() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ub::gpu
