// The attention benchmark driver; see attention.hpp.
#include "measure/attention.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "core/packed_docs.hpp"
#include "core/reference/attention_cpu.hpp"
#include "core/units.hpp"
#include "gpu/attention.hpp"
#include "gpu/attention_buffers.hpp"
#include "gpu/attention_check.hpp"
#include "gpu/device_arena.hpp"
#include "gpu/telemetry_sampler.hpp"
#include "gpu/timing.hpp"

namespace ub::measure {

using nlohmann::json;

json AttentionConfig::to_json() const {
  return {{"seqlens", seqlens},       {"batch", batch},         {"heads", heads},
          {"kv_heads", kv_heads},     {"head_dim", head_dim},   {"doc_len", doc_len},
          {"docs", docs},             {"causal", causal},       {"dtype", to_string(dtype)},
          {"fwd_only", fwd_only},     {"autotune", autotune},
          {"warmup_s", warmup_s},     {"min_samples", min_samples}, {"max_samples", max_samples},
          {"max_seconds", max_seconds}, {"target_noise", target_noise},
          {"check_samples", check_samples}, {"seed", seed}};
}

namespace {

gpu::AttentionProblem problem_at(const AttentionConfig& c, int64_t seqlen) {
  gpu::AttentionProblem p;
  p.batch = c.batch, p.seqlen = seqlen, p.heads = c.heads, p.kv_heads = c.kv_heads, p.head_dim = c.head_dim;
  if (!c.docs.empty()) {
    p.doc_lens = c.docs;
  } else if (c.doc_len > 0 && c.doc_len < seqlen) {
    p.doc_lens = split_documents(seqlen, c.doc_len);
  }
  p.causal = c.causal;
  p.dtype = c.dtype;
  return p;
}

json timing_json(const gpu::Timing& t) {
  return {{"median", t.summary.median}, {"mean", t.summary.mean}, {"min", t.summary.min},
          {"max", t.summary.max},       {"n", t.summary.n},       {"median_low", t.summary.median_low},
          {"median_high", t.summary.median_high}, {"stop", t.stop_reason}};
}

json check_json(const gpu::AttentionCheck& c) {
  json tensors = json::object();
  for (const auto& t : c.tensors) {
    tensors[t.name] = {{"nmse", t.nmse}, {"max_abs_err", t.max_err}, {"max_abs_ref", t.max_ref},
                       {"tolerance", t.tolerance}, {"non_finite", t.non_finite}, {"ok", t.ok()}};
  }
  return {{"ok", c.ok()}, {"rows_sampled", c.rows}, {"cols_sampled", c.cols}, {"tensors", tensors}};
}


}  // namespace

void AttentionConfig::validate() const {
  if (seqlens.empty()) throw UsageError("attention: --seqlens is empty");
  for (int64_t s : seqlens) {
    if (s < 1 || s > (int64_t{1} << 24)) {
      throw UsageError(fmt::format("attention: sequence length {} is out of range (1..16M)", s));
    }
    check_documents(docs, s, "attention --docs");
  }
  if (doc_len < 0) throw UsageError("attention: --doc-len must not be negative");
  if (doc_len > 0 && !docs.empty()) throw UsageError("attention: give --doc-len or --docs, not both");
  if (batch < 1 || batch > 4096) throw UsageError(fmt::format("attention: --batch {} is out of range (1..4096)", batch));
  for (int64_t s : seqlens) gpu::check_sdpa_supported(problem_at(*this, s).sdpa(), !fwd_only);
}

std::vector<AttentionPoint> run_attention(const AttentionConfig& cfg, DeviceRun& run) {
  cfg.validate();
  const bool backward = !cfg.fwd_only;
  gpu::Stream stream;
  const cudaStream_t st = stream.get();
  gpu::CudnnAttention attention;
  attention.set_stream(st);
  attention.set_autotune(cfg.autotune);
  gpu::L2Flusher flusher(run.l2_bytes);

  std::FILE* seed_log = nullptr;
  if (!cfg.seed_log.empty()) {
    seed_log = std::fopen(cfg.seed_log.c_str(), "a");
    if (!seed_log) throw WorkError(fmt::format("--seed-log: cannot open {} for appending", cfg.seed_log));
    std::fprintf(seed_log, "# gpu=%s backend=cudnn causal=%s nheads=%lld nheads_kv=%lld head_dim=%lld\n",
                 run.device_name.c_str(), cfg.causal ? "True" : "False", static_cast<long long>(cfg.heads),
                 static_cast<long long>(cfg.kv_heads), static_cast<long long>(cfg.head_dim));
    std::fflush(seed_log);
  }
  struct Closer {
    std::FILE* f;
    ~Closer() {
      if (f) std::fclose(f);
    }
  } closer{seed_log};

  std::vector<AttentionPoint> out;
  bool warmed = false;
  for (int64_t seqlen : cfg.seqlens) {
    if (run.stop_requested()) break;
    const gpu::AttentionProblem prob = problem_at(cfg, seqlen);
    const gpu::SdpaDims dims = prob.sdpa();
    const AttentionShape shape = prob.shape();
    AttentionPoint pt;
    pt.seqlen = seqlen;
    json rec = {{"type", "attention"}, {"device", run.device}, {"seqlen", seqlen}, {"batch", cfg.batch},
                {"heads", cfg.heads}, {"kv_heads", cfg.kv_heads}, {"head_dim", cfg.head_dim},
                {"causal", cfg.causal}, {"dtype", to_string(cfg.dtype)}, {"doc_len", cfg.doc_len},
                {"docs", prob.docs()}, {"longest_doc", dims.seqlen}, {"ragged", dims.ragged},
                {"backend", "cudnn"},
                {"flops_fwd", attention_flops(shape, false)}, {"flops_fwd_bwd", attention_flops(shape, true)}};
    try {
      size_t free_b = 0, total_b = 0;
      UB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
      const size_t need = gpu::AttentionBuffers::bytes(prob, backward);
      if (need > free_b) {
        throw WorkError(fmt::format("out of memory: {:.1f} GiB of buffers needed, {:.1f} GiB free",
                                    to_gib(need), to_gib(free_b)));
      }
      gpu::AttentionBuffers buf(prob, backward);
      buf.fill_random(cfg.seed, st);
      const gpu::SdpaTensors t = buf.tensors();
      attention.prepare(dims, backward);

      // Correct first: a timing of a wrong result is not a measurement. (The first runs also
      // time the engine configurations when autotuning, so the choice is known after them.)
      attention.forward(dims, t);
      if (backward) attention.backward(dims, t);
      rec["engine_fwd"] = attention.engine(dims, false);
      if (backward) rec["engine_bwd"] = attention.engine(dims, true);
      for (bool pass : {false, true}) {
        json timed = json::array();
        for (const auto& [engine, ms] : attention.timed_candidates(dims, pass)) {
          timed.push_back({{"engine", engine}, {"ms", ms}});
        }
        if (!timed.empty()) rec[pass ? "engine_bwd_timed" : "engine_fwd_timed"] = timed;
      }
      const gpu::AttentionCheck check = gpu::check_attention(prob, t, backward, cfg.check_samples, st);
      rec["check"] = check_json(check);
      pt.check = check.summary();
      if (!check.ok()) throw WorkError("validation failed: " + check.summary());

      gpu::TimingPolicy pol;
      pol.min_samples = cfg.min_samples;
      pol.max_samples = cfg.max_samples;
      pol.max_seconds = cfg.max_seconds;
      pol.target_noise = cfg.target_noise;
      const gpu::Work prepare = [&](cudaStream_t s) { flusher.flush(s); };
      const gpu::Work fwd = [&](cudaStream_t) { attention.forward(dims, t); };
      const gpu::Work fwd_bwd = [&](cudaStream_t) {
        attention.forward(dims, t);
        attention.backward(dims, t);
      };
      if (!warmed) {
        gpu::warm_up(st, backward ? fwd_bwd : fwd, cfg.warmup_s);
        warmed = true;
      }
      gpu::TelemetrySampler sampler(run.nvml.get());
      sampler.start();
      // Times `work` and records it under `name` (fwd or fwd_bwd); returns {median ms, TFLOPS}.
      auto measure = [&](const gpu::Work& work, const std::string& name, bool with_backward) {
        const gpu::Timing timing = gpu::time_samples(st, prepare, work, pol, run.interrupted);
        const double ms = timing.summary.median;
        const double tflops = attention_flops(shape, with_backward) / (ms * 1e-3) / 1e12;
        rec[name + "_time_ms"] = timing_json(timing);
        rec[name + "_ms"] = ms;
        rec[name + "_tflops"] = tflops;
        return std::pair{ms, tflops};
      };
      std::tie(pt.fwd_ms, pt.fwd_tflops) = measure(fwd, "fwd", false);
      if (backward) std::tie(pt.fwd_bwd_ms, pt.fwd_bwd_tflops) = measure(fwd_bwd, "fwd_bwd", true);
      rec["telemetry"] = sampler.stop().to_json();
      rec["plans_built"] = attention.plans_built();
      rec["plan_cache_hits"] = attention.cache_hits();
      pt.ok = true;
    } catch (const WorkError& e) {
      pt.error = e.what();
      pt.oom = gpu::is_out_of_memory_message(pt.error);
      if (pt.oom) rec["type"] = "attention_oom";
      rec["error"] = pt.error;
      (void)cudaGetLastError();  // an allocation failure is not sticky; clear it
    }
    if (run.writer) run.writer->write(rec);
    if (seed_log && pt.ok) {
      json line = {{"seqlen", seqlen}, {"fwd_ms", pt.fwd_ms}, {"fwd_tflops", pt.fwd_tflops}};
      if (backward) line["fwd_bwd_ms"] = pt.fwd_bwd_ms, line["fwd_bwd_tflops"] = pt.fwd_bwd_tflops;
      std::fprintf(seed_log, "%s\n", line.dump().c_str());
      std::fflush(seed_log);
    }
    if (run.progress) {
      run.progress->line(
          pt.ok ? fmt::format("seqlen {:>7}: fwd {:8.3f} ms {:6.1f} TFLOPS{}  [{}]", seqlen, pt.fwd_ms, pt.fwd_tflops,
                              backward ? fmt::format(", fwd+bwd {:8.3f} ms {:6.1f} TFLOPS", pt.fwd_bwd_ms,
                                                     pt.fwd_bwd_tflops)
                                       : std::string(),
                              pt.check)
                : fmt::format("seqlen {:>7}: {}", seqlen, pt.error));
    }
    out.push_back(std::move(pt));
  }
  return out;
}

}  // namespace ub::measure
