// The attention benchmark: cuDNN fused attention (gpu/attention.hpp) forward, and forward +
// backward, at each sequence length, every configuration validated against the fp32 reference
// (gpu/attention_check.hpp) before it is timed. TFLOPS by the seed's convention
// (core/reference/attention_cpu.hpp: f = 4 * batch * s^2 * heads * head_dim, halved when causal,
// sum of len^2 for packed documents; forward+backward 3.5 f). Packed documents of different
// lengths run ragged (gpu/attention.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/device_run.hpp"
#include "core/dtype.hpp"

namespace ub::measure {

struct AttentionConfig {
  std::vector<int64_t> seqlens;
  int64_t batch = 1, heads = 32, kv_heads = 8, head_dim = 128;
  int64_t doc_len = 0;           // packed documents of this length, the last one shorter (0: none)
  std::vector<int64_t> docs;     // or these documents, in buffer order, summing to each seqlen
  bool causal = true;
  Dtype dtype = Dtype::bf16;
  bool fwd_only = false;
  int autotune = 16;  // engine configurations timed per shape (1: cuDNN's first choice)
  double warmup_s = 2;
  int min_samples = 10, max_samples = 200;
  double max_seconds = 2.0;
  double target_noise = 0.01;
  int check_samples = 64;  // sampled rows / columns checked against the reference
  uint64_t seed = 1234;
  std::string seed_log;  // also write the seed's micro-benchmark format here ("" = no)
  nlohmann::json to_json() const;
  // Throws UsageError for what cannot run (before anything is allocated).
  void validate() const;
};

struct AttentionPoint {
  int64_t seqlen = 0;
  bool ok = false, oom = false;
  std::string error;
  double fwd_ms = 0, fwd_tflops = 0, fwd_bwd_ms = 0, fwd_bwd_tflops = 0;
  std::string check;  // the validation summary
};

std::vector<AttentionPoint> run_attention(const AttentionConfig& config, DeviceRun& run);

}  // namespace ub::measure
