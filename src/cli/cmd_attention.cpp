// `upgradebench attention`: cuDNN fused attention forward and forward + backward at Llama shapes
// over sequence lengths (bench/attention.hpp says how it is measured), every point validated
// against an fp32 reference first. Defaults: the Llama-3.1-8B attention the seed uses (32 query
// heads, 8 kv heads, head dim 128, causal, bf16).
#include <fmt/format.h>

#include <algorithm>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "core/error.hpp"
#include "report/format.hpp"

#ifdef UB_HAVE_CUDA
#include "measure/attention.hpp"
#include "cli/gpu_workers.hpp"
#endif

namespace ub::cli {

namespace {

using nlohmann::json;
using report::Align;

struct AttentionOptions {
  std::string seqlens = "1k,2k,4k,8k,16k,32k";
  int64_t heads = 32, kv_heads = 8, head_dim = 128, batch = 1;
  std::string doc_len = "0";
  std::string docs;            // packed documents of these lengths
  bool seqlens_given = false;  // --seqlens on the command line (else --docs sets it)
  bool causal = true;
  std::string dtype = "bf16";
  bool fwd_only = false;
  bool no_autotune = false;
  double warmup_s = 2;
  double max_seconds = 2;
  int min_samples = 10;
  double noise = 0.01;
  int check_samples = 64;
  std::string devices = "0";
  std::string out, seed_log;
  OutputOptions output;
};

#ifdef UB_HAVE_CUDA
// ", packed documents of 8192" or ", 32 packed documents (longest 12288)" for the heading.
std::string packing(const measure::AttentionConfig& c) {
  if (!c.docs.empty()) {
    return fmt::format(", {} packed documents (longest {})", c.docs.size(),
                       *std::max_element(c.docs.begin(), c.docs.end()));
  }
  return c.doc_len ? fmt::format(", packed documents of {}", c.doc_len) : "";
}

void run(Context& ctx, const AttentionOptions& o) {
  measure::AttentionConfig cfg;
  cfg.heads = o.heads, cfg.kv_heads = o.kv_heads, cfg.head_dim = o.head_dim, cfg.batch = o.batch;
  cfg.doc_len = o.doc_len == "0" ? 0 : parse_size(o.doc_len, "--doc-len");
  if (!o.docs.empty()) cfg.docs = parse_size_list(o.docs, "--docs");
  cfg.seqlens = seqlens_or_documents(o.seqlens, o.seqlens_given, cfg.docs, "--seqlens");
  cfg.causal = o.causal;
  cfg.dtype = parse_dtype_list(o.dtype, "--dtype").at(0);
  cfg.fwd_only = o.fwd_only;
  cfg.autotune = o.no_autotune ? 1 : 16;
  if (o.min_samples < 3) throw UsageError("--min-samples must be at least 3");
  if (!(o.noise > 0 && o.noise < 1)) throw UsageError("--noise must be within (0, 1)");
  if (o.warmup_s < 0 || o.max_seconds <= 0) throw UsageError("--warmup-s must be >= 0 and --max-seconds > 0");
  if (o.check_samples < 2 || o.check_samples > 4096) throw UsageError("--check-samples must be within 2..4096");
  cfg.warmup_s = o.warmup_s;
  cfg.max_seconds = o.max_seconds;
  cfg.min_samples = o.min_samples;
  cfg.target_noise = o.noise;
  cfg.check_samples = o.check_samples;
  cfg.seed_log = o.seed_log;
  cfg.validate();  // bad shapes are refused before a GPU is touched

  auto run = start_gpu_run(ctx, "attention", o.devices, o.out, cfg.to_json());
  const auto results = measure_each_device<std::vector<measure::AttentionPoint>>(
      *run, [&](measure::DeviceRun& s) { return measure::run_attention(cfg, s); });

  report::Document doc;
  json j = json::array();
  for (const auto& [s, points] : results) {
    auto& b = doc.add(fmt::format("GPU {}: {}, cuDNN fused attention, {} heads / {} kv heads, head dim {}, {}{}{}",
                                  s.device, s.device_name, cfg.heads, cfg.kv_heads, cfg.head_dim,
                                  to_string(cfg.dtype), cfg.causal ? ", causal" : "",
                                  packing(cfg)));
    b.table.columns = {{"seqlen"}, {"fwd ms"}, {"fwd TFLOPS"}, {"fwd+bwd ms"}, {"fwd+bwd TFLOPS"},
                       {"check", Align::left}};
    for (const auto& p : points) {
      b.table.add_row({fmt::format("{}", p.seqlen), p.ok ? report::num(p.fwd_ms, 3) : "-",
                       p.ok ? report::num(p.fwd_tflops) : "-",
                       p.ok && !cfg.fwd_only ? report::num(p.fwd_bwd_ms, 3) : "-",
                       p.ok && !cfg.fwd_only ? report::num(p.fwd_bwd_tflops) : "-",
                       p.ok ? "ok (NMSE " + p.check + ")" : p.error});
      json pj = {{"device", s.device}, {"seqlen", p.seqlen}, {"ok", p.ok}, {"oom", p.oom}};
      if (p.ok) {
        pj["fwd_ms"] = p.fwd_ms;
        pj["fwd_tflops"] = p.fwd_tflops;
        if (!cfg.fwd_only) pj["fwd_bwd_ms"] = p.fwd_bwd_ms, pj["fwd_bwd_tflops"] = p.fwd_bwd_tflops;
        pj["check"] = p.check;
      } else {
        pj["error"] = p.error;
      }
      j.push_back(pj);
    }
    b.notes.push_back("TFLOPS by the seed's convention: 4 * s^2 * heads * head_dim per sequence, halved when "
                      "causal, sum of len^2 over packed documents; forward+backward counts 3.5x the forward. "
                      "Times are medians; each point was checked against an fp32 reference first.");
  }
  finish_gpu_run(ctx, *run, doc, j, o.output);
}
#else
void run(Context&, const AttentionOptions&) {
  throw WorkError("attention: this binary was built without CUDA (nvcc was not found at build time)");
}
#endif

}  // namespace

void register_attention(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<AttentionOptions>();
  auto* cmd = app.add_subcommand("attention", "Fused attention (cuDNN) forward and backward over sequence "
                                              "lengths, validated, in the seed's TFLOPS");
  auto* seqlens = cmd->add_option("--seqlens", o->seqlens, "Sequence lengths (k = 1024)")->capture_default_str();
  cmd->add_option("--heads", o->heads, "Query heads")->capture_default_str();
  cmd->add_option("--kv-heads", o->kv_heads, "Key/value heads (dividing --heads)")->capture_default_str();
  cmd->add_option("--head-dim", o->head_dim, "Head dimension (64, 128, 256)")->capture_default_str();
  cmd->add_option("--batch", o->batch, "Sequences per batch")->capture_default_str();
  cmd->add_flag("--causal,!--non-causal", o->causal, "Causal mask (the default) or none");
  cmd->add_option("--dtype", o->dtype, "bf16 or fp16")->capture_default_str();
  cmd->add_option("--doc-len", o->doc_len,
                  "Packed documents of this many tokens in each sequence, the last one shorter (0: none)")
      ->capture_default_str();
  cmd->add_option("--docs", o->docs,
                  "Packed documents of these lengths (e.g. 4k,12k,1000), summing to the sequence length "
                  "(the default --seqlens)");
  cmd->add_flag("--fwd-only", o->fwd_only, "Forward pass only");
  cmd->add_flag("--no-autotune", o->no_autotune,
                "Take cuDNN's first engine configuration instead of timing up to 16 (those its heuristics "
                "offer, then the first one with other knob values)");
  cmd->add_option("--warmup-s", o->warmup_s, "Seconds of attention before measuring")->capture_default_str();
  cmd->add_option("--max-seconds", o->max_seconds, "Time limit per timing")->capture_default_str();
  cmd->add_option("--min-samples", o->min_samples, "Fewest timed samples")->capture_default_str();
  cmd->add_option("--noise", o->noise, "Stop when the median's 95% interval is within this fraction")
      ->capture_default_str();
  cmd->add_option("--check-samples", o->check_samples, "Rows and columns checked against the reference")
      ->capture_default_str();
  cmd->add_option("--devices", o->devices, "GPU indices, or 'all' (measured at the same time)")->capture_default_str();
  cmd->add_option("--out", o->out, "Records file (JSON lines; default upgradebench-attention-<date>.jsonl)");
  cmd->add_option("--seed-log", o->seed_log, "Also append the seed's attention micro-benchmark format here");
  o->output.add_to(*cmd);
  cmd->callback([&ctx, o, seqlens] {
    o->seqlens_given = seqlens->count() > 0;
    run(ctx, *o);
  });
}

}  // namespace ub::cli
