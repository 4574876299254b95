// The attention benchmark: cuDNN fused attention (gpu/attention.hpp) forward, and forward +
// backward, at each sequence length, every configuration checked against the fp32 reference
// (gpu/attention_check.hpp) before it is timed. A point is one sequence length with two timed
// units (fwd, fwd_bwd), an L2 flush before each sample. TFLOPS by bench_flash_attn.py's
// convention (model/reference/attention_cpu.hpp: f = 4 * batch * s^2 * heads * head_dim, halved
// when causal, sum of len^2 for packed documents; forward+backward 3.5 f). Packed documents of
// different lengths run ragged (gpu/attention.hpp).
#pragma once

#include <cstdio>
#include <memory>
#include <vector>

#include "measure/driver.hpp"
#include "records/attention_records.hpp"

namespace ub::gpu {
class CudnnAttention;
class L2Flusher;
struct AttentionProblem;
}  // namespace ub::gpu

namespace ub::measure {

// UsageError for what cannot run, before anything is allocated: the configuration's ranges and
// what cuDNN's fused attention supports at each length.
void validate(const AttentionConfig& config);

// The problem at one sequence length, as the GPU side takes it.
gpu::AttentionProblem attention_problem(const AttentionConfig& config, int64_t seqlen);

class AttentionBenchmark : public Benchmark {
 public:
  AttentionBenchmark(const AttentionConfig& config, DeviceRun& run);
  ~AttentionBenchmark() override;

  bool next() override;
  std::string label() const override;
  std::unique_ptr<Point> prepare(cudaStream_t stream) override;
  std::string failed(const WorkError& error, bool out_of_memory) override;
  void warm_up(Point& first, cudaStream_t stream) override;  // forward + backward when both are measured

  const std::vector<AttentionRecord>& results() const { return results_; }

 private:
  friend class AttentionPoint;
  AttentionRecord current() const;

  AttentionConfig cfg_;
  DeviceRun& run_;
  size_t index_ = 0;
  bool started_ = false;
  std::unique_ptr<gpu::CudnnAttention> attention_;
  std::unique_ptr<gpu::L2Flusher> flusher_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> flash_attn_log_{nullptr, &std::fclose};
  std::vector<AttentionRecord> results_;
};

}  // namespace ub::measure
