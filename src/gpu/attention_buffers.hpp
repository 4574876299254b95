// The device buffers of one attention problem (inputs, output, statistic and, for a backward
// pass, dO and the gradients), inputs filled with random normal values: what the benchmark and
// the GPU tests both run on. Documents of different lengths also get their lengths and ragged
// offsets (gpu/attention.hpp), in int32 as cuDNN reads them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/attention.hpp"
#include "gpu/attention_check.hpp"
#include "gpu/cuda_raii.hpp"

namespace ub::gpu {

class AttentionBuffers {
 public:
  AttentionBuffers(const AttentionProblem& p, bool backward);
  // Q, K, V (and dO with a backward pass) random normal from `seed`.
  void fill_random(uint64_t seed, cudaStream_t s);
  SdpaTensors tensors() const;
  // Device memory a problem needs: these buffers plus cuDNN's fp32 backward scratch.
  static size_t bytes(const AttentionProblem& p, bool backward);

  DeviceBuffer q, k, v, o, stats, d_o, dq, dk, dv;
  DeviceBuffer seq_lens, q_offsets, kv_offsets;  // ragged problems only

 private:
  AttentionProblem problem_;
  bool backward_;
};

}  // namespace ub::gpu
