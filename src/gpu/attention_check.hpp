// Validates one cuDNN attention result against the fp32 GPU reference (kernels/attention_ref.cuh)
// at sampled positions: O and the softmax statistic at sampled query rows, and after a backward
// pass dQ at the same rows and dK, dV at sampled key columns. The measure is the normalised mean
// squared error (NMSE = sum (x - ref)^2 / sum ref^2, llama.cpp's test measure) and no non-finite
// value anywhere it looked: a NaN never passes.
//
// Tolerances (NMSE, records/attention_records.hpp): bf16 1e-3, fp16 2.5e-4. A correct kernel rounds its output and its
// probabilities to 16 bits, which alone costs about 1e-5 (bf16, 8 significant bits) or 2e-7
// (fp16); the margin covers the fp32 accumulation order and dS rounded to 16 bits in the
// backward. A wrong mask, scale or head mapping gives NMSE near 1. The statistic (log-sum-exp,
// fp32 in both) is held to 1e-6.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "facts/dtype.hpp"
#include "gpu/attention.hpp"
#include "model/reference/attention_cpu.hpp"
#include "records/attention_records.hpp"

namespace ub::gpu {

// The problem in the caller's terms: one BSHD buffer of `seqlen` tokens per batch entry, packed
// with the documents `doc_lens` (facts/packed_docs.hpp; empty: one document). `t.stats` is in
// cuDNN's layout for the folded dims. With `backward`, t.d_o / dq / dk / dv must be filled.
struct AttentionProblem {
  int64_t batch = 1, seqlen = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::vector<int64_t> doc_lens;
  bool causal = true;
  Dtype dtype = Dtype::bf16;
  int64_t window = 0;  // causal sliding window in keys (0: none)
  // Documents of different lengths: cuDNN runs them with ragged offsets and a padding mask.
  bool ragged() const;
  int64_t docs() const { return doc_lens.empty() ? 1 : static_cast<int64_t>(doc_lens.size()); }
  // cuDNN's view: documents folded into the batch (equal lengths: the same memory as `docs`
  // sequences; different lengths: ragged, the longest as its sequence length).
  SdpaDims sdpa() const;
  // The core library's view (FLOP accounting, the CPU reference): documents listed.
  AttentionShape shape() const;
};

[[nodiscard]] AttentionCheck check_attention(const AttentionProblem& p, const SdpaTensors& t, bool backward, int max_samples,
                               cudaStream_t s);

}  // namespace ub::gpu
