// The attention benchmark's descriptor; see attention.hpp.
#include "measure/attention.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/units.hpp"
#include "facts/gpu_features.hpp"
#include "facts/packed_docs.hpp"
#include "gpu/attention.hpp"
#include "gpu/attention_buffers.hpp"
#include "gpu/attention_check.hpp"
#include "gpu/timing.hpp"
#include "measure/injected_wrong.hpp"
#include "model/reference/attention_cpu.hpp"

namespace ub::measure {

void validate(const AttentionConfig& c) {
  c.validate();
  for (int64_t s : c.seqlens) gpu::check_sdpa_supported(attention_problem(c, s).sdpa(), !c.fwd_only);
}

gpu::AttentionProblem attention_problem(const AttentionConfig& c, int64_t seqlen) {
  gpu::AttentionProblem p;
  p.batch = c.batch, p.seqlen = seqlen, p.heads = c.heads, p.kv_heads = c.kv_heads, p.head_dim = c.head_dim;
  p.doc_lens = c.documents(seqlen);
  p.causal = c.causal;
  p.window = c.window;
  p.dtype = c.dtype;
  return p;
}

class AttentionPoint : public Point {
 public:
  AttentionPoint(AttentionBenchmark& b, AttentionRecord rec, const gpu::AttentionProblem& prob, cudaStream_t s)
      : b_(b), rec_(std::move(rec)), prob_(prob), dims_(prob.sdpa()), backward_(!b.cfg_.fwd_only), s_(s),
        buf_(prob, backward_) {
    buf_.fill_random(b.cfg_.seed, s);
    t_ = buf_.tensors();
    attention().prepare(dims_, backward_);
  }

  std::optional<std::string> check() override {
    // The first runs also time the engine configurations when autotuning: the choice is known after them.
    attention().forward(dims_, t_);
    if (backward_) attention().backward(dims_, t_);
    rec_.engine_fwd = attention().engine(dims_, false);
    if (backward_) rec_.engine_bwd = attention().engine(dims_, true);
    for (bool pass : {false, true}) {
      for (const auto& [engine, ms] : attention().timed_candidates(dims_, pass)) {
        (pass ? rec_.engine_bwd_timed : rec_.engine_fwd_timed).push_back({engine, ms});
      }
    }
    spoil_if_injected("attention", buf_.o, s_);
    const AttentionCheck c = gpu::check_attention(prob_, t_, backward_, b_.cfg_.check_samples, s_);
    rec_.check = c;
    if (!c.ok()) return c.summary();
    return std::nullopt;
  }

  std::vector<TimedUnit> units() override {
    const gpu::L2Flusher& flusher = *b_.flusher_;
    const gpu::Work flush = [&flusher](cudaStream_t s) { flusher.flush(s); };
    std::vector<TimedUnit> u = {{"fwd", [this](cudaStream_t) { attention().forward(dims_, t_); }, flush, {}, false}};
    if (backward_) {
      u.push_back({"fwd_bwd",
                   [this](cudaStream_t) {
                     attention().forward(dims_, t_);
                     attention().backward(dims_, t_);
                   },
                   flush, {}, false});
    }
    return u;
  }

  std::string record(const Measured& m) override {
    rec_.ok = m.error.empty() && !m.timings.empty();
    if (!m.error.empty()) rec_.error = "validation failed: " + m.error;
    if (rec_.ok) {
      const gpu::Timing& f = m.timings[0];
      rec_.fwd_time = TimeStats{f.summary, f.stop_reason};
      rec_.fwd_ms = f.summary.median;
      rec_.fwd_tflops = tflops_from(rec_.flops_fwd, rec_.fwd_ms);
      if (m.timings.size() > 1) {
        const gpu::Timing& fb = m.timings[1];
        rec_.fwd_bwd_time = TimeStats{fb.summary, fb.stop_reason};
        rec_.fwd_bwd_ms = fb.summary.median;
        rec_.fwd_bwd_tflops = tflops_from(rec_.flops_fwd_bwd, fb.summary.median);
      }
      rec_.telemetry = m.telemetry;
      rec_.plans_built = attention().plans_built();
      rec_.plan_cache_hits = attention().cache_hits();
    }
    b_.run_.emit(rec_);
    if (rec_.ok && b_.flash_attn_log_) {
      std::fprintf(b_.flash_attn_log_.get(), "%s\n", flash_attn_line(rec_).dump().c_str());
      std::fflush(b_.flash_attn_log_.get());
    }
    b_.results_.push_back(rec_);
    if (!rec_.ok) return fmt::format("seqlen {:>7}: {}", rec_.seqlen, rec_.error);
    return fmt::format("seqlen {:>7}: fwd {:8.3f} ms {:6.1f} TFLOPS{}  [{}]", rec_.seqlen, rec_.fwd_ms, rec_.fwd_tflops,
                       rec_.fwd_bwd_ms ? fmt::format(", fwd+bwd {:8.3f} ms {:6.1f} TFLOPS", *rec_.fwd_bwd_ms,
                                                     *rec_.fwd_bwd_tflops)
                                       : std::string(),
                       rec_.check ? rec_.check->summary() : "");
  }

 private:
  gpu::CudnnAttention& attention() const { return *b_.attention_; }

  AttentionBenchmark& b_;
  AttentionRecord rec_;
  gpu::AttentionProblem prob_;
  gpu::SdpaDims dims_;
  bool backward_;
  cudaStream_t s_;
  gpu::AttentionBuffers buf_;
  gpu::SdpaTensors t_;
};

AttentionBenchmark::AttentionBenchmark(const AttentionConfig& config, DeviceRun& run)
    : Benchmark(config.timing), cfg_(config), run_(run) {
  validate(cfg_);
  // The capability table (facts/gpu_features.hpp) before cuDNN is asked: fp8 attention needs Hopper.
  const GpuFeature needed = cfg_.dtype == Dtype::fp8 ? GpuFeature::fused_attention_fp8 : GpuFeature::fused_attention_bf16;
  if (const auto why = missing_feature(needed, ComputeCapability{run.cc_major, run.cc_minor})) {
    throw UsageError(fmt::format("attention --dtype {}: {} (GPU {}: {})", to_string(cfg_.dtype), *why, run.device,
                                 run.device_name));
  }
  attention_ = std::make_unique<gpu::CudnnAttention>();
  attention_->set_autotune(cfg_.autotune);
  flusher_ = std::make_unique<gpu::L2Flusher>(run.l2_bytes);
  if (!cfg_.flash_attn_log.empty()) {
    flash_attn_log_.reset(std::fopen(cfg_.flash_attn_log.c_str(), "a"));
    if (!flash_attn_log_) {
      throw WorkError(fmt::format("--flash-attn-log: cannot open {} for appending", cfg_.flash_attn_log));
    }
    // bench_flash_attn.py's header line.
    const std::string window = cfg_.window > 0 ? fmt::format(" window={}", cfg_.window) : "";
    std::fprintf(flash_attn_log_.get(), "# gpu=%s backend=cudnn causal=%s nheads=%lld nheads_kv=%lld head_dim=%lld%s\n",
                 run.device_name.c_str(), cfg_.causal ? "True" : "False", static_cast<long long>(cfg_.heads),
                 static_cast<long long>(cfg_.kv_heads), static_cast<long long>(cfg_.head_dim), window.c_str());
    std::fflush(flash_attn_log_.get());
  }
}

AttentionBenchmark::~AttentionBenchmark() = default;

bool AttentionBenchmark::next() {
  if (started_) ++index_;
  started_ = true;
  return index_ < cfg_.seqlens.size();
}

std::string AttentionBenchmark::label() const { return fmt::format("seqlen {}", cfg_.seqlens[index_]); }

AttentionRecord AttentionBenchmark::current() const {
  const gpu::AttentionProblem prob = attention_problem(cfg_, cfg_.seqlens[index_]);
  const gpu::SdpaDims dims = prob.sdpa();
  const AttentionShape shape = prob.shape();
  AttentionRecord r;
  r.device = run_.device;
  r.seqlen = prob.seqlen;
  r.batch = cfg_.batch, r.heads = cfg_.heads, r.kv_heads = cfg_.kv_heads, r.head_dim = cfg_.head_dim;
  r.causal = cfg_.causal;
  r.window = cfg_.window;
  r.dtype = to_string(cfg_.dtype);
  r.backend = "cudnn";
  r.doc_len = cfg_.doc_len;
  r.docs = prob.docs();
  r.longest_doc = dims.seqlen;
  r.ragged = dims.ragged;
  r.flops_fwd = attention_flops(shape, false);
  r.flops_fwd_bwd = attention_flops(shape, true);
  return r;
}

std::unique_ptr<Point> AttentionBenchmark::prepare(cudaStream_t stream) {
  attention_->set_stream(stream);
  const gpu::AttentionProblem prob = attention_problem(cfg_, cfg_.seqlens[index_]);
  size_t free_b = 0, total_b = 0;
  UB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const size_t need = gpu::AttentionBuffers::bytes(prob, !cfg_.fwd_only);
  if (need > free_b) {
    throw WorkError(fmt::format("out of memory: {:.1f} GiB of buffers needed, {:.1f} GiB free", to_gib(need),
                                to_gib(free_b)));
  }
  return std::make_unique<AttentionPoint>(*this, current(), prob, stream);
}

std::string AttentionBenchmark::failed(const WorkError& error, bool out_of_memory) {
  AttentionRecord r = current();
  r.error = error.what();
  r.oom = out_of_memory;
  run_.emit(r);
  results_.push_back(r);
  return fmt::format("seqlen {:>7}: {}", r.seqlen, r.error);
}

void AttentionBenchmark::warm_up(Point& first, cudaStream_t stream) {
  const std::vector<TimedUnit> units = first.units();
  if (units.empty() || timing().warmup_s <= 0) return;
  gpu::warm_up(stream, units.back().work, timing().warmup_s);
}

}  // namespace ub::measure
