// The training-step benchmark driver; see train.hpp.
#include "measure/train.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "core/flops.hpp"
#include "core/statistics.hpp"
#include "core/units.hpp"
#include "core/train/llama_layout.hpp"
#include "gpu/cuda_raii.hpp"
#include "gpu/device_arena.hpp"
#include "measure/train_breakdown.hpp"
#include "gpu/linear_gemm.hpp"
#include "gpu/llama_engine.hpp"
#include "gpu/step_profiler.hpp"
#include "gpu/telemetry_sampler.hpp"

namespace ub::measure {

using nlohmann::json;

namespace {

// Random initialisation predicts nearly uniformly: the final norm gives unit-RMS features, so
// each logit is ~ normal(0, sigma), sigma = init_std * sqrt(hidden), and the expected loss is
// E[logsumexp] - E[label logit] ~ ln(vocab) + sigma^2 / 2.
double initial_loss_estimate(const ModelShape& m) {
  const double sigma2 = kInitStd * kInitStd * static_cast<double>(m.hidden);
  return std::log(static_cast<double>(m.vocab)) + sigma2 / 2;
}

json memory_json(const gpu::MemorySnapshot& m) {
  return {{"allocated_gib", to_gib(m.allocated)}, {"reserved_gib", to_gib(m.reserved)}, {"peak_gib", to_gib(m.peak)},
          {"device_used_gib", to_gib(m.device_used)}};
}

}  // namespace

json TrainConfig::to_json() const {
  return {{"model", model_name},
          {"layers", model.layers},
          {"config_layers", model.config_layers},
          {"hidden", model.hidden},
          {"intermediate", model.intermediate},
          {"heads", model.heads},
          {"kv_heads", model.kv_heads},
          {"head_dim", model.head_dim},
          {"vocab", model.vocab},
          {"tied_embeddings", model.tied_embeddings},
          {"rope_theta", model.rope_theta},
          {"rope_scaling", model.rope_scaling ? json(model.rope_scaling->type) : json()},
          {"seqlen", seqlen},
          {"batch", batch},
          {"dtype", "bf16"},
          {"precision", master_weights ? "bf16 compute, fp32 master weights and AdamW state, fp32 gradients"
                                       : "pure bf16: bf16 weights, gradients and AdamW state"},
          {"master_weights", master_weights},
          {"steps", steps},
          {"warmup", warmup},
          {"optimizer", {{"name", "AdamW"}, {"lr", adam.lr}, {"beta1", adam.beta1}, {"beta2", adam.beta2},
                         {"eps", adam.eps}, {"weight_decay", adam.weight_decay}, {"max_grad_norm", adam.max_grad_norm}}},
          {"attention", "cuDNN fused SDPA, causal"},
          {"activation_checkpointing", checkpointing},
          {"loss_chunk", loss_chunk},
          {"fused_cross_entropy", loss_chunk > 0},
          {"gemm_autotune", autotune_gemm},
          {"breakdown", breakdown},
          {"seed", seed},
          {"tokens", fmt::format("synthetic, uniform below {}", synthetic_token_bound(model.vocab))}};
}

void TrainConfig::validate() const {
  check_trainable(model);
  if (seqlen < 2 || seqlen > (int64_t{1} << 24)) {
    throw UsageError(fmt::format("train: --seqlen {} is out of range (2..16M)", seqlen));
  }
  if (batch < 1 || batch > 4096) throw UsageError(fmt::format("train: --batch {} is out of range (1..4096)", batch));
  if (steps < 1 || steps > 100000) throw UsageError(fmt::format("train: --steps {} is out of range (1..100000)", steps));
  if (warmup < 0 || warmup > 100000) throw UsageError(fmt::format("train: --warmup {} is out of range (0..100000)", warmup));
  if (!(adam.lr >= 0 && adam.lr < 1)) throw UsageError(fmt::format("train: --lr {} is out of range [0, 1)", adam.lr));
  if (!(adam.beta1 >= 0 && adam.beta1 < 1 && adam.beta2 >= 0 && adam.beta2 < 1)) {
    throw UsageError("train: --beta1 and --beta2 must be within [0, 1)");
  }
  if (!(adam.eps > 0)) throw UsageError("train: --eps must be positive");
  if (!(adam.weight_decay >= 0)) throw UsageError("train: --weight-decay must not be negative");
  if (!(adam.max_grad_norm >= 0)) throw UsageError("train: --max-grad-norm must not be negative (0: no clipping)");
  if (loss_chunk < 0 || loss_chunk > (int64_t{1} << 24)) {
    throw UsageError(fmt::format("train: --loss-chunk {} is out of range (0..16M tokens; 0: no chunks)", loss_chunk));
  }
}

TrainSummary run_train(const TrainConfig& cfg, DeviceRun& run, const std::function<void(const json&)>& echo) {
  cfg.validate();
  auto emit = [&](const json& rec) {
    if (run.writer) run.writer->write(rec);
    if (echo) echo(rec);
  };
  FlopOptions model_count;
  model_count.batch = cfg.batch;
  const StepFlops flops = step_flops(cfg.model, cfg.seqlen, model_count);
  // Hardware FLOPs: with checkpointing the recomputed forward is done too (MFU does not count it).
  FlopOptions hardware_count = model_count;
  hardware_count.recompute = cfg.checkpointing;
  const StepFlops hw_flops = step_flops(cfg.model, cfg.seqlen, hardware_count);
  TrainSummary sum;
  std::vector<double> ms, tflops;
  try {
    gpu::Stream stream;
    gpu::EngineOptions eo;
    eo.batch = cfg.batch, eo.seqlen = cfg.seqlen, eo.master_weights = cfg.master_weights, eo.adam = cfg.adam;
    eo.checkpointing = cfg.checkpointing, eo.loss_chunk = cfg.loss_chunk, eo.autotune_gemm = cfg.autotune_gemm;
    if (run.progress) run.progress->line(fmt::format("seqlen {}: planning memory", cfg.seqlen));
    gpu::LlamaEngine engine(cfg.model, eo, stream.get());
    engine.init_parameters(cfg.seed);
    engine.set_tokens(synthetic_tokens(cfg.seed + 1, cfg.batch, cfg.seqlen, cfg.model.vocab));
    gpu::Event start, stop;
    const int total = cfg.warmup + cfg.steps;
    const double expected_loss = initial_loss_estimate(cfg.model);
    for (int step = 0; step < total; ++step) {
      if (run.stop_requested()) break;
      const bool debug = cfg.mem_debug && step == 0;
      auto probe = [&](const char* phase) {
        const json rec = {{"type", "train_memory"}, {"seqlen", cfg.seqlen}, {"step", step}, {"phase", phase},
                          {"memory", memory_json(engine.memory())}};
        emit(rec);
      };
      gpu::TelemetrySampler sampler(run.nvml.get());
      sampler.start();
      start.record(stream.get());
      engine.forward_backward(debug ? gpu::LlamaEngine::PhaseHook(probe) : gpu::LlamaEngine::PhaseHook());
      engine.optimizer_step();
      stop.record(stream.get());
      stream.sync();
      const TelemetrySummary telemetry = sampler.stop();
      if (debug) probe("step");
      const double t_ms = stop.since(start);
      const double loss = engine.loss();
      if (!std::isfinite(loss)) throw WorkError(fmt::format("step {}: the loss is {} (not finite)", step, loss));
      if (step == 0 && std::abs(loss - expected_loss) > 0.25) {
        throw WorkError(fmt::format("step 0: loss {:.4f} at initialisation is far from the expected {:.4f} "
                                    "(ln vocab + sigma^2 / 2); the engine computes something else than the model",
                                    loss, expected_loss));
      }
      const gpu::MemorySnapshot mem = engine.memory();
      const double tf = flops.total() / 1e12 / (t_ms * 1e-3);
      const bool warm = step < cfg.warmup;
      json rec = {{"type", "train_step"}, {"device", run.device}, {"seqlen", cfg.seqlen}, {"batch", cfg.batch},
                  {"step", step}, {"warmup", warm}, {"exec_time_ms", t_ms}, {"tflops", tf},
                  {"mfu", cfg.peak_tflops ? json(tf / *cfg.peak_tflops) : json()},
                  {"hfu", cfg.peak_tflops ? json(hw_flops.total() / 1e12 / (t_ms * 1e-3) / *cfg.peak_tflops) : json()},
                  {"peak_mem_gib", to_gib(mem.reserved)}, {"peak_allocated_gib", to_gib(mem.peak)},
                  {"device_used_gib", to_gib(mem.device_used)}, {"loss", loss}, {"grad_norm", engine.grad_norm()},
                  {"flop", flops.total()}, {"attention_share", flops.attention_share()},
                  {"telemetry", telemetry.to_json()}};
      emit(rec);
      sum.last_loss = loss;
      sum.peak_mem_gib = to_gib(mem.reserved);
      if (!warm) ms.push_back(t_ms), tflops.push_back(tf);
      if (run.progress) {
        run.progress->line(fmt::format("seqlen {} step {}{}: {:.1f} ms, {:.1f} TFLOPS, loss {:.4f}", cfg.seqlen, step,
                                           warm ? " (warm-up)" : "", t_ms, tf, loss));
      }
    }
    if (cfg.breakdown && !run.stop_requested()) {
      gpu::StepProfiler profiler;
      engine.set_profiler(&profiler);
      start.record(stream.get());
      engine.forward_backward();
      engine.optimizer_step();
      stop.record(stream.get());
      stream.sync();
      engine.set_profiler(nullptr);
      const Breakdown b = make_breakdown(profiler.collect(), stop.since(start), engine.gemm().choices());
      json rec = b.to_json();
      rec["type"] = "train_breakdown";
      rec["seqlen"] = cfg.seqlen;
      rec["device"] = run.device;
      emit(rec);
      if (run.progress) run.progress->line(b.table());
    }
    sum.ok = true;
  } catch (const WorkError& e) {
    sum.error = e.what();
    sum.oom = dynamic_cast<const gpu::OutOfMemory*>(&e) != nullptr || gpu::is_out_of_memory_message(sum.error);
    (void)cudaGetLastError();
    json rec = {{"type", sum.oom ? "train_oom" : "train_error"}, {"device", run.device}, {"seqlen", cfg.seqlen},
                {"batch", cfg.batch}, {"error", sum.error}};
    if (const auto* oom = dynamic_cast<const gpu::OutOfMemory*>(&e)) {
      rec["what"] = oom->what_allocated();
      rec["bytes"] = oom->bytes();
    } else if (sum.oom) {
      rec["what"] = sum.error;
    }
    emit(rec);
  }
  sum.steps = static_cast<int>(ms.size());
  if (!ms.empty()) {
    sum.median_ms = summarize(ms).median;
    sum.median_tflops = summarize(tflops).median;
    if (cfg.peak_tflops) sum.mfu = sum.median_tflops / *cfg.peak_tflops;
  }
  return sum;
}

}  // namespace ub::measure
