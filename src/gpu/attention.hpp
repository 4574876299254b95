// Scaled-dot-product attention, forward and backward, through cuDNN's fused attention engines,
// reached by building the graph those engines recognise (gpu/cudnn_graph.hpp) as the cuDNN
// frontend's "composite" SDPA does for the cuDNN versions we support (9.14 on the device's system,
// 9.19 in its torch environment; the SDPA_FWD operation of 9.19 has no causal mask before 9.21):
//
//   forward:  S = Q K^T (fp32) * scale; causal: S[i, j] = -inf where j > i (row >= col kept);
//             a sliding window w also masks j <= i - w (col + w > row kept);
//             M = rowmax S; E = exp(S - M); Z = rowsum E; stats = M + log Z; P = E / Z (bf16);
//             O = P V
//   backward: Ddot = rowsum(dO * O); P = exp(S * scale - stats) (masked); dV = P^T dO;
//             dS = P * (dO V^T - Ddot) * scale; dK = dS^T Q; dQ = dS K (fp32, then cast)
//             grouped-query heads: dK, dV summed over each kv head's q heads by a reduction.
//
// Layout BSHD in memory (Q, O, dQ, dO: [batch, seq, heads, head_dim]; K, V, dK, dV with kv_heads),
// as a Llama layer produces it; stats [batch, heads, seq] fp32. Packed documents of equal length
// L are the same buffer seen as batch * (seq / L) sequences of L (identical memory), so no ragged
// offsets are needed. Packed documents of different lengths are `ragged`: cuDNN's batch is the
// documents, its sequence length the longest one, and at run time each document's length
// (seq_lens, a padding mask: rows and keys past it are masked, the matmuls stop there) and the
// element offset of its first token in the packed buffers (ragged offsets on Q, K, V, O and the
// gradients); the statistic and the fp32 scratch stay [documents, heads, longest]. Plans are
// built once per shape and cached.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "facts/dtype.hpp"
#include "gpu/cuda_raii.hpp"
#include "gpu/elem.hpp"

namespace ub::gpu {

class CudnnHandle;
class GraphPlan;
struct AttentionPlan;

// One attention problem as cuDNN sees it (packed documents already folded into the batch).
struct SdpaDims {
  int64_t batch = 1, seqlen = 0, heads = 0, kv_heads = 0, head_dim = 0;
  bool causal = true;
  Dtype dtype = Dtype::bf16;
  bool ragged = false;  // documents of different lengths; lengths and offsets in SdpaTensors
  int64_t window = 0;   // causal sliding window in keys: query i sees keys i - window < j <= i (0: none)
  double scale() const;
  auto key() const { return std::tie(batch, seqlen, heads, kv_heads, head_dim, causal, window, ragged, dtype); }
  bool operator<(const SdpaDims& o) const { return key() < o.key(); }
};

// The element type of Q, K, V, O and the gradients for `d` (bf16 or fp16).
Elem attention_elem(Dtype d);

// Throws UsageError when cuDNN's fused attention cannot run these dims (dtype, head dim,
// head counts), or, with `backward`, cannot run their backward pass right with the cuDNN loaded;
// called before anything is allocated.
void check_sdpa_supported(const SdpaDims& d, bool backward);

struct SdpaTensors {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* stats = nullptr;  // [batch, heads, seq]: written by forward, read by backward
  const void* d_o = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  // ragged only (int32): each document's length [batch], and the element offsets of each
  // document's first token in Q, O, dO, dQ and in K, V, dK, dV [batch + 1].
  const int* seq_lens = nullptr;
  const int* q_offsets = nullptr;
  const int* kv_offsets = nullptr;
};

class CudnnAttention {
 public:
  CudnnAttention();
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;

  void set_stream(cudaStream_t s);
  // Autotuning: build up to `candidates` engine configurations for each new shape (those cuDNN's
  // heuristics offer, then the first one with each knob moved; GraphBuilder::build_candidates)
  // and keep the fastest, timed on its first run (1, the default: cuDNN's first choice, nothing
  // timed). Plans built before the call keep their choice.
  void set_autotune(int candidates);
  // Builds (or finds in the cache) the plans for `d`.
  void prepare(const SdpaDims& d, bool backward);
  void forward(const SdpaDims& d, const SdpaTensors& t);
  void backward(const SdpaDims& d, const SdpaTensors& t);

  int plans_built() const { return built_; }
  int cache_hits() const { return hits_; }
  std::string engine(const SdpaDims& d, bool backward) const;
  // With autotuning, what each candidate took on its first timing (engine, median ms).
  std::vector<std::pair<std::string, float>> timed_candidates(const SdpaDims& d, bool backward) const;
  // Device memory the plans of `d` use beyond the tensors (workspace and fp32 scratch).
  size_t scratch_bytes(const SdpaDims& d, bool backward) const;

 private:
  AttentionPlan& plan(const SdpaDims& d, bool backward);
  const AttentionPlan* cached(const SdpaDims& d, bool backward) const;  // null when not built
  void* scratch(size_t bytes);
  void run(AttentionPlan& p, const std::map<int64_t, void*>& ptrs, void* workspace);
  void choose_fastest(AttentionPlan& p, const std::function<void(const GraphPlan&)>& run);

  std::unique_ptr<CudnnHandle> handle_;
  std::map<SdpaDims, std::unique_ptr<AttentionPlan>> fwd_, bwd_;
  DeviceBuffer scratch_;
  cudaStream_t stream_ = nullptr;
  int candidates_ = 1;
  int built_ = 0, hits_ = 0;
};

}  // namespace ub::gpu
