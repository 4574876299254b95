// The suite's plan and its estimates; see suite_plan.hpp.
#include "analysis/suite_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <filesystem>

#include "base/error.hpp"
#include "facts/flops.hpp"
#include "facts/step_gemms.hpp"

namespace ub {

namespace {

// Rates on an H200 (results/train.md, attention.md, mamf.md; the set-up times from a suite of
// Llama-3.1-8B with 2 layers at 2k and 4k on 2026-12-04): what the estimates are made of.
constexpr double kH200Bf16Peak = 989;      // TFLOPS, the catalog's dense bf16 figure
constexpr double kStepTflops = 400;        // our engine's step at long lengths (403 at 128k, 32 layers)
constexpr double kAttentionTflops = 500;   // cuDNN's fused attention, forward + backward
constexpr double kGemmTflops = 700;        // a bf16 product of a step's shape
constexpr double kProcessSeconds = 3;      // a train process: start, memory plan, GEMM autotuning
constexpr double kProfileOverhead = 1.3;   // a step under CUPTI, against one without
constexpr int kBisectionProbes = 6;        // lengths --find-max tries, aimed by the memory fit
constexpr double kTraceBytesPerSecond = 50e6;  // decompose reading a gzip trace

// How much faster than an H200 `gpu` is at dense bf16 (1: unknown).
double speed(const Accelerator* gpu) {
  const auto peak = gpu ? gpu->peak(Dtype::bf16).get() : std::nullopt;
  return peak && *peak > 0 ? *peak / kH200Bf16Peak : 1.0;
}

std::string seqlen_list(const std::vector<int64_t>& v) {
  std::vector<std::string> s;
  for (int64_t x : v) s.push_back(std::to_string(x));
  return fmt::format("{}", fmt::join(s, ","));
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

double sweep_seconds(const SuiteRequest& r, const std::vector<int64_t>& lengths) {
  double s = 0;
  for (int64_t len : lengths) {
    s += kProcessSeconds + (r.train.steps + r.train.warmup) * estimated_step_seconds(r.train, len, r.gpu);
  }
  return s;
}

double bisection_seconds(const SuiteRequest& r, int64_t longest) {
  // The probes land around the longest length that fits; 1.5x the longest measured one is where
  // the guide's 4-layer sweep ends (and each probe runs a warm-up step and one timed step).
  const int64_t around = r.find_max_ceiling > 0 ? std::min(r.find_max_ceiling, longest * 3 / 2) : longest * 3 / 2;
  return kBisectionProbes * (kProcessSeconds + 2 * estimated_step_seconds(r.train, around, r.gpu));  // warm-up + 1
}

double decompose_seconds(const SuiteRequest& r, int64_t len) {
  const int steps = std::min(r.train.steps, 3) + r.train.profile_steps;
  return kProcessSeconds + steps * kProfileOverhead * estimated_step_seconds(r.train, len, r.gpu);
}

double attention_seconds(const SuiteRequest& r, const std::vector<int64_t>& lengths) {
  const ModelShape& m = r.train.model;
  const int64_t window = attention_window(m);
  double s = 0;
  for (int64_t len : lengths) {
    // bench_flash_attn.py's FLOPs: causal forward 2 s^2 h d per sequence (the squares a window
    // leaves, facts/flops.hpp), forward + backward 3.5x.
    const double fwd_bwd = 3.5 * 2.0 * causal_attention_squares(len, window) *
                           static_cast<double>(m.heads * m.head_dim) * static_cast<double>(r.train.batch);
    const double one = fwd_bwd / (kAttentionTflops * 1e12 * speed(r.gpu));
    s += 1 + 2 * 1.0 + 20 * one;  // set-up and check, two timings, 16 engines tuned
  }
  return s;
}

double mamf_step_seconds(const SuiteRequest& r, int64_t len) {
  StepLevers lv;
  lv.batch = r.train.batch, lv.checkpointing = r.train.checkpointing;
  lv.mlp_tile = r.train.mlp_tile, lv.loss_chunk = r.train.loss_chunk;
  double s = 10;  // warm-up
  for (const StepGemm& g : distinct_shapes(step_gemms(r.train.model, len, lv))) {
    s += 0.2 + 200 * g.flop() / (kGemmTflops * 1e12 * speed(r.gpu));  // 8 algorithms checked, then timed
  }
  return s;
}

double trace_seconds(const std::string& path) {
  std::error_code ec;
  const auto bytes = std::filesystem::is_regular_file(path, ec) ? std::filesystem::file_size(path, ec) : 0;
  return 2 + static_cast<double>(ec ? 0 : bytes) / kTraceBytesPerSecond;
}

SuitePlan build(const SuiteRequest& r, const std::vector<int64_t>& lengths, bool find_max, bool decompose_long) {
  const ModelShape& m = r.train.model;
  const int64_t shortest = lengths.front(), longest = lengths.back();
  const std::string model = r.train.model_name, layers = std::to_string(m.layers);
  const std::string workload = fmt::format("{}, {} layers", model, m.layers);
  SuitePlan p;
  p.parts.push_back({"env", "the stack fingerprint: GPU, driver, CUDA, cuBLASLt, cuDNN, NCCL", {"env", "--json"},
                     "env.json", true, 2});
  // The GPU the training parts measure (--device), for the micro-benchmarks too.
  const std::vector<std::string> on_device =
      r.device != 0 ? std::vector<std::string>{"--devices", std::to_string(r.device)} : std::vector<std::string>{};
  p.parts.push_back({"mamf", "the matmul ceiling, mamf-finder.py's 27 bf16 shapes", with({"mamf"}, on_device), "mamf.jsonl",
                     false, 10 + 27 * 0.15 / speed(r.gpu)});
  std::vector<std::string> step_levers = {"--layers", layers, "--batch", std::to_string(r.train.batch)};
  if (r.train.checkpointing) step_levers.push_back("--checkpointing");
  if (r.train.mlp_tile) step_levers.insert(step_levers.end(), {"--mlp-tile", std::to_string(r.train.mlp_tile)});
  if (r.train.loss_chunk) step_levers.insert(step_levers.end(), {"--loss-chunk", std::to_string(r.train.loss_chunk)});
  p.parts.push_back({"mamf-step", fmt::format("the step's own products ({} at {})", workload, shortest),
                     with(with({"mamf", "--shapes-of", model, "--seqlen", std::to_string(shortest)}, step_levers), on_device),
                     "mamf-step.jsonl", false, mamf_step_seconds(r, shortest)});
  p.parts.push_back({"bandwidth", "HBM copy, read and write of 1 GiB and 4 GiB",
                     with({"bandwidth", "--sizes", "1G,4G"}, on_device), "bandwidth.jsonl", false, 4});
  // A model whose layers all attend within one window is measured in it; one that mixes windowed
  // and full layers, at full attention, as its full layers run (said in the part's words).
  const int64_t window = attention_window(m);
  std::vector<std::string> attention = {"attention", "--seqlens", seqlen_list(lengths), "--heads", std::to_string(m.heads),
                                        "--kv-heads", std::to_string(m.kv_heads), "--head-dim",
                                        std::to_string(m.head_dim), "--batch", std::to_string(r.train.batch)};
  if (window > 0) attention.insert(attention.end(), {"--window", std::to_string(window)});
  attention.insert(attention.end(), on_device.begin(), on_device.end());
  int64_t windowed = 0;
  for (int64_t l = 0; l < m.layers; ++l) windowed += m.window(l) > 0;
  const std::string kind = window > 0 ? fmt::format(", within the layers' window of {} tokens", window)
                           : windowed > 0
                               ? fmt::format(", full causal as {} of its {} layers run it (the other {} attend within a "
                                             "window: the step's decompositions time them)", m.layers - windowed,
                                             m.layers, windowed)
                               : "";
  p.parts.push_back({"attention",
                     fmt::format("fused attention, {} heads / {} kv heads, head dim {}, at {}{}", m.heads, m.kv_heads,
                                 m.head_dim, seqlen_list(lengths), kind),
                     attention,
                     "attention.jsonl", false, attention_seconds(r, lengths)});
  std::vector<std::string> sweep = with({"sweep", "--seqlens", seqlen_list(lengths)}, r.train_args);
  double sweep_s = sweep_seconds(r, lengths);
  if (find_max) {
    sweep.insert(sweep.end(), {"--find-max", "--find-max-steps", "1"});
    if (r.find_max_ceiling > 0) sweep.insert(sweep.end(), {"--find-max-ceiling", std::to_string(r.find_max_ceiling)});
    sweep_s += bisection_seconds(r, longest);
  }
  p.parts.push_back({"sweep",
                     fmt::format("the training step of {} at {}{}", workload, seqlen_list(lengths),
                                 find_max ? ", then the longest length that fits" : ""),
                     sweep, "sweep.jsonl", false, sweep_s});
  auto decompose = [&](const std::string& name, int64_t len) {
    p.parts.push_back({name, fmt::format("where the step's time goes at {}", len),
                       with({"decompose", "--seqlen", std::to_string(len), "--steps",
                             std::to_string(std::min(r.train.steps, 3))},
                            r.engine_args),
                       name + ".jsonl", false, decompose_seconds(r, len)});
  };
  decompose("decompose-short", shortest);
  if (decompose_long && longest != shortest) decompose("decompose-long", longest);
  if (r.gpus > 1) {
    p.parts.push_back({"nccl", fmt::format("all_reduce, all_gather and reduce_scatter on {} GPUs, 1 MiB to 4 GiB", r.gpus),
                       {"nccl", "--gpus", "all"}, "nccl.jsonl", false, 45});
  }
  for (size_t i = 0; i < r.traces.size(); ++i) {
    const std::string name = fmt::format("trace-{}", i + 1);
    p.parts.push_back({name, "torch.profiler trace " + r.traces[i] + ", decomposed", {"decompose", r.traces[i]},
                       name + ".jsonl", false, trace_seconds(r.traces[i])});
  }
  return p;
}

}  // namespace

int64_t attention_window(const ModelShape& m) {
  std::set<int64_t> kinds;
  for (int64_t l = 0; l < m.layers; ++l) kinds.insert(m.window(l));
  return kinds.size() == 1 ? *kinds.begin() : 0;
}

double SuitePlan::total_s() const {
  double s = 0;
  for (const SuitePart& p : parts) s += p.estimate_s;
  return s;
}

double estimated_step_seconds(const TrainConfig& cfg, int64_t seqlen, const Accelerator* gpu) {
  FlopOptions fo;
  fo.batch = cfg.batch;
  fo.recompute = cfg.checkpointing;
  return step_flops(cfg.model, seqlen, fo).total() / (kStepTflops * 1e12 * speed(gpu));
}

SuitePlan plan_suite(const SuiteRequest& r) {
  if (r.seqlens.empty()) throw UsageError("suite: no sequence length to measure");
  std::vector<int64_t> lengths = r.seqlens;
  bool find_max = r.find_max, decompose_long = true;
  std::vector<std::string> dropped;
  SuitePlan p = build(r, lengths, find_max, decompose_long);
  auto over = [&] { return r.budget_s && p.total_s() > *r.budget_s; };
  auto again = [&](std::string why) {
    dropped.push_back(std::move(why));
    p = build(r, lengths, find_max, decompose_long);
  };
  if (over() && find_max) {
    find_max = false;
    again("the bisection for the longest length that fits (--find-max)");
  }
  if (over() && decompose_long && lengths.size() > 1) {
    decompose_long = false;
    again(fmt::format("the decomposition at the longest length ({})", lengths.back()));
  }
  while (over() && lengths.size() > 1) {
    const int64_t last = lengths.back();
    lengths.pop_back();
    again(fmt::format("length {} (attention, sweep)", last));
  }
  if (over()) {
    throw UsageError(fmt::format("suite: the smallest plan (the ceiling and one length, {}) takes about {:.0f} s, "
                                 "more than --budget {:.0f} s: give more time, fewer layers or a shorter length",
                                 lengths.front(), p.total_s(), *r.budget_s));
  }
  p.dropped = std::move(dropped);
  return p;
}

}  // namespace ub
