// The training-step benchmark's descriptor; see train.hpp.
#include "measure/train.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "base/units.hpp"
#include "facts/flops.hpp"
#include "facts/gpu_features.hpp"
#include "gpu/cuda_raii.hpp"
#include "gpu/device_arena.hpp"
#include "gpu/linear_gemm.hpp"
#include "gpu/model/llama_engine.hpp"
#include "gpu/nccl_comm.hpp"
#include "gpu/step_profiler.hpp"
#include "measure/engine_decomposition.hpp"
#include "measure/engine_trace.hpp"
#include "model/hf_checkpoint.hpp"
#include "model/llama_layout.hpp"

namespace ub::measure {

namespace {

// Random initialisation predicts nearly uniformly: the final norm gives unit-RMS features, so
// each logit is ~ normal(0, sigma), sigma = init_std * sqrt(hidden), and the expected loss is
// E[logsumexp] - E[label logit] ~ ln(vocab) + sigma^2 / 2.
double initial_loss_estimate(const ModelShape& m) {
  const double sigma2 = kInitStd * kInitStd * static_cast<double>(m.hidden);
  return std::log(static_cast<double>(m.vocab)) + sigma2 / 2;
}

MemoryGib gib(const gpu::MemorySnapshot& m) {
  return {to_gib(m.allocated), to_gib(m.reserved), to_gib(m.peak), to_gib(m.device_used)};
}

// FLOPs the engine does beyond the model's (MFU's) count, per step: what activation
// checkpointing recomputes (each layer's qkv and o projections, its attention forward unless
// selective checkpointing kept it, and gate|up; never the down projection, whose output is the
// next layer's kept input) and what a tiled MLP's backward recomputes (gate|up). 2 FLOPs per
// multiply-add, as the model's count.
double engine_recompute_flops(const TrainConfig& c, const StepFlops& model) {
  const ModelShape& m = c.model;
  const double tokens = static_cast<double>(c.batch * c.seqlen), H = static_cast<double>(m.hidden);
  const double q = static_cast<double>(m.heads * m.head_dim), kv = static_cast<double>(m.kv_heads * m.head_dim);
  const double I = static_cast<double>(m.intermediate), layers = static_cast<double>(m.layers);
  const bool tiled = c.mlp_tile > 0 && c.mlp_tile < c.batch * c.seqlen;
  double per_token = 0;
  if (c.checkpointing) per_token += 2 * H * (q + 2 * kv) + 2 * q * H;
  if (c.checkpointing || tiled) per_token += 2 * H * 2 * I;
  const double attention_forward = c.checkpointing && !c.selective ? model.attention / 3 : 0;  // fwd is 1 of fwd+bwd's 3
  return layers * tokens * per_token + attention_forward;
}

}  // namespace

class TrainPoint : public Point {
 public:
  TrainPoint(TrainBenchmark& b, cudaStream_t s) : b_(b), cfg_(b.cfg_), s_(s), engine_(cfg_.model, engine_options(), s) {
    if (cfg_.weights.empty()) {
      engine_.init_parameters(cfg_.seed);
    } else {
      engine_.set_parameters(load_hf_weights(cfg_.weights, cfg_.model, engine_.layout()).flat);
    }
    const int rank = b.comm_ ? b.comm_->rank() : 0;
    engine_.set_tokens(cfg_.tokens.empty()
                           ? synthetic_tokens(cfg_.seed + 1, cfg_.batch, cfg_.seqlen, cfg_.model.vocab, rank * cfg_.batch)
                           : load_token_ids(cfg_.tokens, rank * cfg_.batch, cfg_.batch, cfg_.seqlen, cfg_.model.vocab));
    FlopOptions model_count;
    model_count.batch = cfg_.batch;
    flops_ = step_flops(cfg_.model, cfg_.seqlen, model_count);
    // Hardware FLOPs: the model's and what the engine recomputes (MFU does not count it).
    hw_flop_ = flops_.total() + engine_recompute_flops(cfg_, flops_);
  }

  // The engine's numerics are checked against the CPU reference by the GPU tests; each step's
  // loss is checked as it is measured (sampled()).
  std::optional<std::string> check() override { return std::nullopt; }

  std::vector<TimedUnit> units() override {
    TimingPolicy steps;
    steps.min_samples = steps.max_samples = cfg_.steps;
    steps.discard = cfg_.warmup;
    steps.batch = 1;  // one step, then its record
    steps.max_seconds = std::numeric_limits<double>::infinity();
    const gpu::Work step = [this](cudaStream_t) {
      const bool debug = cfg_.mem_debug && step_ == 0;
      engine_.forward_backward(debug ? gpu::LlamaEngine::PhaseHook([this](const char* phase) { probe(phase); })
                                     : gpu::LlamaEngine::PhaseHook());
      engine_.optimizer_step();
    };
    return {{"step", step, {}, steps, true}};
  }

  void sampled(size_t, int index, double ms, const TelemetrySummary* telemetry) override {
    step_ = index + 1;
    if (cfg_.mem_debug && index == 0) probe("step", 0);
    if (cfg_.mem_debug && index == 0) emit_probes();
    double loss = engine_.loss();
    if (!std::isfinite(loss)) throw WorkError(fmt::format("step {}: the loss is {} (not finite)", index, loss));
    const double expected = initial_loss_estimate(cfg_.model);
    if (index == 0 && cfg_.weights.empty() && std::abs(loss - expected) > 0.25) {
      throw WorkError(fmt::format("step 0: loss {:.4f} at initialisation is far from the expected {:.4f} "
                                  "(ln vocab + sigma^2 / 2); the engine computes something else than the model",
                                  loss, expected));
    }
    gpu::MemorySnapshot mem = engine_.memory();
    TrainStep r;
    r.device = b_.run_.device;
    r.seqlen = cfg_.seqlen, r.batch = cfg_.batch, r.step = index;
    r.warmup = index < cfg_.warmup;
    double checkpoint_copy_ms = engine_.exposed_checkpoint_copy_ms();
    auto pinned = static_cast<double>(engine_.pinned_host_bytes());
    if (gpu::NcclComm* comm = b_.comm_) {
      // The job's step: the slowest rank's time, the largest rank's memory, the loss of every
      // rank's sequences, the slowest rank's exposed communication.
      const std::vector<double> all = comm->gather_from_ranks(
          {ms, static_cast<double>(mem.reserved), static_cast<double>(mem.peak), static_cast<double>(mem.device_used),
           engine_.exposed_comm_ms(), engine_.exposed_offload_ms(), loss, checkpoint_copy_ms, pinned});
      constexpr size_t k = 9;
      int slowest = 0;
      double loss_sum = 0;
      for (int q = 0; q < comm->world(); ++q) {
        const double* v = all.data() + static_cast<size_t>(q) * k;
        if (v[0] > all[static_cast<size_t>(slowest) * k]) slowest = q;
        mem.reserved = std::max(mem.reserved, static_cast<size_t>(v[1]));
        mem.peak = std::max(mem.peak, static_cast<size_t>(v[2]));
        mem.device_used = std::max(mem.device_used, static_cast<size_t>(v[3]));
        loss_sum += v[6];
        pinned = std::max(pinned, v[8]);
      }
      const double* worst = all.data() + static_cast<size_t>(slowest) * k;
      ms = worst[0];
      loss = loss_sum / comm->world();
      r.world_size = comm->world(), r.slowest_rank = slowest;
      r.exposed_comm_ms = worst[4];
      if (cfg_.offload_optimizer) r.exposed_offload_ms = worst[5];
      checkpoint_copy_ms = worst[7];
    }
    if (cfg_.offload_checkpoints) r.exposed_checkpoint_copy_ms = checkpoint_copy_ms;
    if (pinned > 0) r.pinned_host_gib = to_gib(static_cast<size_t>(pinned));
    r.exec_time_ms = ms;
    r.tflops = tflops_from(flops_.total(), ms);
    r.mfu = fraction_of(r.tflops, cfg_.peak_tflops);
    r.hfu = fraction_of(tflops_from(hw_flop_, ms), cfg_.peak_tflops);
    r.peak_mem_gib = to_gib(mem.reserved);
    r.peak_allocated_gib = to_gib(mem.peak);
    r.device_used_gib = to_gib(mem.device_used);
    r.loss = loss;
    r.grad_norm = engine_.grad_norm();
    r.flop = flops_.total();
    r.attention_share = flops_.attention_share();
    r.expert_tokens = expert_tokens_of(engine_.expert_rows());
    if (std::string g = engine_.expert_gemm(); !g.empty()) r.expert_gemm = std::move(g);
    if (telemetry) r.telemetry = *telemetry;
    b_.run_.emit(r);
    TrainSummary& sum = b_.summary_;
    sum.last_loss = loss;
    sum.peak_mem_gib = *r.peak_mem_gib;
    b_.run_.say(fmt::format("seqlen {} step {}{}: {:.1f} ms, {:.1f} TFLOPS, loss {:.4f}", cfg_.seqlen, index,
                            r.warmup ? " (warm-up)" : "", ms, *r.tflops, loss));
  }

  std::string record(const Measured& m) override {
    TrainSummary& sum = b_.summary_;
    sum.ok = true;
    if (!m.timings.empty()) {
      const gpu::Timing& t = m.timings.front();
      sum.steps = static_cast<int>(t.summary.n);
      if (sum.steps > 0) {
        sum.median_ms = t.summary.median;
        sum.median_tflops = tflops_from(flops_.total(), sum.median_ms);
        sum.mfu = fraction_of(sum.median_tflops, cfg_.peak_tflops).value_or(0);
      }
    }
    if ((cfg_.decompose || cfg_.breakdown) && !m.interrupted) profile();
    if (sum.steps == 0) return "";
    return fmt::format("seqlen {}: median of {} steps {:.2f} ms, {:.1f} TFLOPS{}, peak {:.2f} GiB, loss {:.4f}",
                       cfg_.seqlen, sum.steps, sum.median_ms, sum.median_tflops,
                       cfg_.peak_tflops ? fmt::format(" (MFU {:.1f}%)", 100 * sum.mfu) : std::string(), sum.peak_mem_gib,
                       sum.last_loss);
  }

 private:
  gpu::EngineOptions engine_options() const {
    gpu::EngineOptions eo;
    eo.batch = cfg_.batch, eo.seqlen = cfg_.seqlen, eo.master_weights = cfg_.master_weights, eo.adam = cfg_.adam;
    eo.checkpointing = cfg_.checkpointing, eo.selective = cfg_.selective, eo.mlp_tile = cfg_.mlp_tile;
    eo.offload_checkpoints = cfg_.offload_checkpoints;
    eo.loss_chunk = cfg_.loss_chunk, eo.autotune_gemm = cfg_.autotune_gemm;
    eo.comm = b_.comm_, eo.zero = cfg_.zero, eo.bucket_elems = static_cast<size_t>(cfg_.bucket_elems);
    eo.offload_optimizer = cfg_.offload_optimizer, eo.host_threads = cfg_.host_threads;
    return eo;
  }

  // --mem-debug: what the engine holds after a phase of the first step, kept until the step
  // ends; then every rank's probes go to rank 0's records (no collective inside the step).
  void probe(const char* phase, int64_t step = 0) { probes_.push_back({cfg_.seqlen, step, phase, gib(engine_.memory()), std::nullopt}); }

  void emit_probes() {
    std::vector<double> mine;
    for (const TrainMemory& p : probes_) {
      mine.insert(mine.end(), {p.memory.allocated, p.memory.reserved, p.memory.peak, p.memory.device_used});
    }
    const std::vector<double> all = b_.comm_ ? b_.comm_->gather_from_ranks(mine) : mine;
    const size_t ranks = b_.comm_ ? static_cast<size_t>(b_.comm_->world()) : 1;
    for (size_t q = 0; q < ranks; ++q) {
      for (size_t i = 0; i < probes_.size(); ++i) {
        TrainMemory m = probes_[i];
        const double* v = all.data() + q * mine.size() + i * 4;
        m.memory = {v[0], v[1], v[2], v[3]};
        if (b_.comm_) m.rank = static_cast<int>(q);
        b_.run_.emit(m);
      }
    }
    probes_.clear();
  }

  // More steps under CUPTI: the decomposition record, and the breakdown of the median step.
  void profile() {
    gpu::StepProfiler profiler;
    engine_.set_profiler(&profiler);
    for (int i = 0; i < cfg_.profile_steps; ++i) {
      b_.run_.status(fmt::format("seqlen {}: profiled step {}/{}", cfg_.seqlen, i + 1, cfg_.profile_steps));
      profiler.step_begin(s_);
      engine_.forward_backward();
      engine_.optimizer_step();
      profiler.step_end(s_);
    }
    engine_.set_profiler(nullptr);
    gpu::StepProfiler::Profile p = profiler.collect();
    if (!cfg_.trace_out.empty() && (!b_.comm_ || b_.comm_->rank() == 0)) {  // rank 0's trace
      write_chrome_trace(p, b_.run_.device_name, b_.run_.device, cfg_.trace_out);
      b_.run_.say(fmt::format("seqlen {}: the profiled steps as a Chrome trace: {}", cfg_.seqlen, cfg_.trace_out));
    }
    trace::KernelClasses none;
    EngineProfile e = analyse_profile(std::move(p), b_.classes_ ? *b_.classes_ : none, b_.run_.device_name,
                                      b_.run_.device, engine_.gemm().choices());
    if (cfg_.breakdown) {
      e.breakdown.seqlen = cfg_.seqlen;
      b_.run_.emit(e.breakdown);
      b_.run_.say(e.breakdown.table());
    }
    DecompositionRecord r = trace::summarize(e.decomposition, e.work, b_.gpu_);
    r.file = fmt::format("{} layers, seqlen {}, batch {}", cfg_.model.layers, cfg_.seqlen, cfg_.batch);
    r.seqlen = cfg_.seqlen, r.batch = cfg_.batch;
    if (b_.summary_.steps > 0) r.wall_step_ms = b_.summary_.median_ms;
    b_.run_.emit(r);
    b_.decomposition_ = std::move(r);
  }

  TrainBenchmark& b_;
  const TrainConfig& cfg_;
  cudaStream_t s_;
  gpu::LlamaEngine engine_;
  StepFlops flops_;
  double hw_flop_ = 0;
  int step_ = 0;  // steps taken
  std::vector<TrainMemory> probes_;
};

TrainBenchmark::TrainBenchmark(const TrainConfig& config, DeviceRun& run, trace::KernelClasses* classes,
                               const Accelerator* gpu, gpu::NcclComm* comm)
    : Benchmark(BenchmarkTiming{0, {}}), cfg_(config), run_(run), classes_(classes), gpu_(gpu), comm_(comm) {
  cfg_.validate();
  if (const auto why = missing_feature(GpuFeature::engine, ComputeCapability{run.cc_major, run.cc_minor})) {
    throw UsageError(fmt::format("train: {} (GPU {}: {})", *why, run.device, run.device_name));
  }
}

TrainBenchmark::~TrainBenchmark() = default;

bool TrainBenchmark::next() {
  if (done_) return false;
  done_ = true;
  return true;
}

std::string TrainBenchmark::label() const { return fmt::format("seqlen {}", cfg_.seqlen); }

std::unique_ptr<Point> TrainBenchmark::prepare(cudaStream_t stream) {
  run_.say(fmt::format("seqlen {}: planning memory", cfg_.seqlen));
  if (!comm_) return std::make_unique<TrainPoint>(*this, stream);
  // Every rank must have its step before the first collective: the ranks say whether they do
  // (0), ran out of memory (1, with the bytes) or failed otherwise (2).
  std::unique_ptr<Point> p;
  std::exception_ptr mine;
  double code = 0, bytes = 0;
  try {
    p = std::make_unique<TrainPoint>(*this, stream);
  } catch (const gpu::OutOfMemory& e) {
    mine = std::current_exception(), code = 1, bytes = static_cast<double>(e.bytes());
  } catch (const WorkError& e) {
    mine = std::current_exception(), code = gpu::is_out_of_memory_message(e.what()) ? 1 : 2;
  }
  const std::vector<double> all = comm_->gather_from_ranks({code, bytes});
  for (int q = 0; q < comm_->world(); ++q) {
    const double c = all[static_cast<size_t>(q) * 2], b = all[static_cast<size_t>(q) * 2 + 1];
    if (c == 0) continue;
    if (q == comm_->rank()) std::rethrow_exception(mine);
    if (c == 1) throw gpu::OutOfMemory(fmt::format("the step on rank {}", q), static_cast<size_t>(b));
    throw WorkError(fmt::format("rank {} could not prepare the step (its error is on its stderr)", q));
  }
  return p;
}

std::string TrainBenchmark::failed(const WorkError& error, bool out_of_memory) {
  summary_.ok = false;
  summary_.oom = out_of_memory;
  summary_.error = error.what();
  TrainFailure f;
  f.oom = out_of_memory;
  f.device = run_.device;
  f.seqlen = cfg_.seqlen;
  f.batch = cfg_.batch;
  f.error = summary_.error;
  if (const auto* oom = dynamic_cast<const gpu::OutOfMemory*>(&error)) {
    f.what = oom->what_allocated();
    f.bytes = oom->bytes();
  }
  run_.emit(f);
  return out_of_memory ? fmt::format("seqlen {}: did not fit: {}", cfg_.seqlen, summary_.error) : "";
}

}  // namespace ub::measure
