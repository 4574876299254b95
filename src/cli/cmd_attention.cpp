// `upgradebench attention`: cuDNN fused attention forward and forward + backward at Llama shapes
// over sequence lengths (measure/attention.hpp says how it is measured), every point checked
// against an fp32 reference first. Defaults: the Llama-3.1-8B attention the ml-engineering guide
// measures (32 query heads, 8 kv heads, head dim 128, causal, bf16). The table and --json are the
// view of its records (report/measurement_views.hpp).
#include <fmt/format.h>

#include "base/error.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_binary.hpp"
#include "cli/measuring_shell.hpp"
#include "cli/timing_flags.hpp"
#include "records/attention_records.hpp"

#ifdef UB_HAVE_CUDA
#include "cli/gpu_workers.hpp"
#include "measure/attention.hpp"
#endif

namespace ub::cli {

namespace {

struct AttentionOptions {
  std::string seqlens = "1k,2k,4k,8k,16k,32k";
  std::string doc_len = "0";
  std::string docs;            // packed documents of these lengths
  bool seqlens_given = false;  // --seqlens on the command line (else --docs sets it)
  std::string dtype = "bf16";
  bool no_autotune = false;
  AttentionConfig config;
  ShellOptions shell;
};

void run(Context& ctx, AttentionOptions& o) {
  AttentionConfig& cfg = o.config;
  cfg.doc_len = o.doc_len == "0" ? 0 : parse_size(o.doc_len, "--doc-len");
  if (!o.docs.empty()) cfg.docs = parse_size_list(o.docs, "--docs");
  cfg.seqlens = seqlens_or_documents(o.seqlens, o.seqlens_given, cfg.docs, "--seqlens");
  cfg.dtype = parse_dtype_list(o.dtype, "--dtype").at(0);
  cfg.autotune = o.no_autotune ? 1 : 16;
#ifdef UB_HAVE_CUDA
  measure::validate(cfg);  // bad shapes are refused before a GPU is touched
  auto run = start_gpu_run(ctx, "attention", o.shell.devices, o.shell.out, cfg);
  const auto results = measure_each_device<std::vector<AttentionRecord>>(*run, [&](measure::DeviceRun& d) {
    measure::AttentionBenchmark b(cfg, d);
    measure::run_benchmark(b, d);
    return b.results();
  });
  finish_gpu_run(ctx, *run, report::attention_view(results, cfg), o.shell.output);
#else
  cfg.validate();
  run_in_gpu_binary(ctx, "attention");
#endif
}

}  // namespace

void register_attention(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<AttentionOptions>();
  AttentionConfig& c = o->config;
  auto* cmd = app.add_subcommand("attention", "Fused attention (cuDNN) forward and backward over sequence "
                                              "lengths, validated, in bench_flash_attn.py's TFLOPS");
  auto* seqlens = cmd->add_option("--seqlens,--seqlen", o->seqlens, "Sequence lengths (k = 1024)")->capture_default_str();
  cmd->add_option("--heads", c.heads, "Query heads")->capture_default_str();
  cmd->add_option("--kv-heads", c.kv_heads, "Key/value heads (dividing --heads)")->capture_default_str();
  cmd->add_option("--head-dim", c.head_dim, "Head dimension (64, 128, 256)")->capture_default_str();
  cmd->add_option("--batch", c.batch, "Sequences per batch")->capture_default_str();
  cmd->add_flag("--causal,!--non-causal", c.causal, "Causal mask (the default) or none");
  cmd->add_option("--window", c.window,
                  "Causal sliding window: each query sees itself and the N - 1 keys before it (Mistral's and "
                  "Gemma's sliding_window; 0: none)")
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "bf16 or fp16")->capture_default_str();
  cmd->add_option("--doc-len", o->doc_len,
                  "Packed documents of this many tokens in each sequence, the last one shorter (0: none)")
      ->capture_default_str();
  cmd->add_option("--docs", o->docs,
                  "Packed documents of these lengths (e.g. 4k,12k,1000), summing to the sequence length "
                  "(the default --seqlens)");
  cmd->add_flag("--fwd-only", c.fwd_only, "Forward pass only");
  cmd->add_flag("--no-autotune", o->no_autotune,
                "Take cuDNN's first engine configuration instead of timing up to 16 (those its heuristics "
                "offer, then the first one with other knob values)");
  add_timing_flags(*cmd, c.timing);
  cmd->add_option("--check-samples", c.check_samples, "Rows and columns checked against the reference")
      ->capture_default_str();
  cmd->add_option("--flash-attn-log", c.flash_attn_log, "Also append the points in bench_flash_attn.py's format here");
  add_shell_options(*cmd, ctx, o->shell, "attention", {.devices = true});
  cmd->callback([&ctx, o, seqlens] {
    o->seqlens_given = seqlens->count() > 0;
    run(ctx, *o);
  });
}

}  // namespace ub::cli
