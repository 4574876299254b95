// The records of `attention` (fused attention forward and forward + backward per sequence
// length): the configuration, the check of a result against the fp32 reference, and one
// `attention` record per point (`attention_oom` when it did not fit). Lines of
// bench_flash_attn.py ({seqlen, fwd_ms, fwd_tflops, fwd_bwd_ms, fwd_bwd_tflops}) are read into
// the same struct: our records carry those fields under the same names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "facts/dtype.hpp"
#include "records/fields.hpp"
#include "records/timing_policy.hpp"
#include "records/timing_record.hpp"

namespace ub {

struct AttentionConfig {
  std::vector<int64_t> seqlens;
  int64_t batch = 1, heads = 32, kv_heads = 8, head_dim = 128;
  int64_t doc_len = 0;        // packed documents of this length, the last one shorter (0: none)
  std::vector<int64_t> docs;  // or these documents, in buffer order, summing to each seqlen
  bool causal = true;
  int64_t window = 0;  // causal sliding window in keys (0: none)
  Dtype dtype = Dtype::bf16;
  bool fwd_only = false;
  int autotune = 16;  // engine configurations timed per shape (1: cuDNN's first choice)
  BenchmarkTiming timing{2, {10, 200, 0.0, 2.0, 0.01, 10, 0}};
  int check_samples = 64;  // sampled rows / columns checked against the reference
  uint64_t seed = 1234;
  std::string flash_attn_log;  // also append bench_flash_attn.py's lines here ("" = no)
  // UsageError for sizes and options out of range (what cuDNN supports is the GPU side's check).
  void validate() const;
  // The documents packed in a sequence of `seqlen` (empty: one document).
  std::vector<int64_t> documents(int64_t seqlen) const;
};

// One output tensor checked: the normalised mean squared error against the reference (NMSE =
// sum (x - ref)^2 / sum ref^2) and no non-finite value.
struct TensorCheck {
  std::string name;  // "O", "LSE", "dQ", "dK", "dV"
  double nmse = 0, max_err = 0, max_ref = 0, tolerance = 0;
  unsigned long long non_finite = 0;
  bool ok() const { return non_finite == 0 && nmse <= tolerance; }
};

struct AttentionCheck {
  std::vector<TensorCheck> tensors;
  int rows = 0, cols = 0;  // positions sampled
  bool ok() const;
  // "O 3.1e-06, LSE ..., dQ ..." or the first failure in words.
  std::string summary() const;
};

// NMSE tolerance of a 16-bit attention result (bf16 1e-3, fp16 2.5e-4).
double attention_tolerance(Dtype d);
// The loosest of them: a record's check whose tolerance is looser is held to this one.
inline constexpr double kLoosestAttentionTolerance = 1e-3;

struct EngineTiming {
  std::string engine;
  double ms = 0;
};

struct AttentionRecord {
  int device = 0;
  int64_t seqlen = 0, batch = 1, heads = 0, kv_heads = 0, head_dim = 0;
  bool causal = true;
  int64_t window = 0;  // causal sliding window in keys (0: none)
  std::string dtype, backend;
  int64_t doc_len = 0, docs = 1, longest_doc = 0;
  bool ragged = false;
  double flops_fwd = 0, flops_fwd_bwd = 0;
  std::string engine_fwd, engine_bwd;
  std::vector<EngineTiming> engine_fwd_timed, engine_bwd_timed;
  std::optional<AttentionCheck> check;
  std::optional<TimeStats> fwd_time, fwd_bwd_time;
  double fwd_ms = 0, fwd_tflops = 0;
  std::optional<double> fwd_bwd_ms, fwd_bwd_tflops;
  TelemetrySummary telemetry;
  int plans_built = 0, plan_cache_hits = 0;
  bool ok = false, oom = false;
  std::string error;
};

void to_json(nlohmann::json& j, const AttentionConfig& c);
void to_json(nlohmann::json& j, const AttentionCheck& c);
void to_json(nlohmann::json& j, const AttentionRecord& r);
// A measured point (our `attention` record or a bench_flash_attn.py line): seqlen, fwd_ms and
// fwd_tflops required, every figure finite and non-negative.
AttentionRecord read_attention_point(const Fields& f);
// The point as bench_flash_attn.py prints it.
nlohmann::json flash_attn_line(const AttentionRecord& r);

}  // namespace ub
