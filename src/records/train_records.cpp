// Training-step records; see train_records.hpp and docs/records.md.
#include "records/train_records.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "base/error.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "model/llama_layout.hpp"
#include "records/measurement_bounds.hpp"

namespace ub {

using nlohmann::json;

void to_json(json& j, const TrainConfig& c) {
  const ModelShape& m = c.model;
  j = {{"model", c.model_name},
       {"layers", m.layers},
       {"config_layers", m.config_layers},
       {"hidden", m.hidden},
       {"intermediate", m.intermediate},
       {"heads", m.heads},
       {"kv_heads", m.kv_heads},
       {"head_dim", m.head_dim},
       {"vocab", m.vocab},
       {"tied_embeddings", m.tied_embeddings},
       {"rope_theta", m.rope_theta},
       {"rope_scaling", m.rope_scaling ? json(m.rope_scaling->type) : json()},
       {"seqlen", c.seqlen},
       {"batch", c.batch},
       {"dtype", "bf16"},
       {"precision", c.master_weights ? "bf16 compute, fp32 master weights and AdamW state, fp32 gradients"
                                      : "pure bf16: bf16 weights, gradients and AdamW state"},
       {"master_weights", c.master_weights},
       {"steps", c.steps},
       {"warmup", c.warmup},
       {"optimizer", {{"name", "AdamW"}, {"lr", c.adam.lr}, {"beta1", c.adam.beta1}, {"beta2", c.adam.beta2},
                      {"eps", c.adam.eps}, {"weight_decay", c.adam.weight_decay}, {"max_grad_norm", c.adam.max_grad_norm}}},
       {"attention", "cuDNN fused SDPA, causal"},
       {"activation_checkpointing", c.checkpointing},
       {"checkpointing_kept", c.checkpointing ? json(c.selective ? "layer inputs, attention outputs and statistics"
                                                                 : "layer inputs") : json()},
       {"offload_checkpoints", c.offload_checkpoints},
       {"mlp_tile", c.mlp_tile},
       {"world_size", c.world},
       {"zero_stage", c.zero},
       {"bucket_elements", c.bucket_elems},
       {"offload_optimizer", c.offload_optimizer},
       {"loss_chunk", c.loss_chunk},
       {"fused_cross_entropy", c.loss_chunk > 0},
       {"gemm_autotune", c.autotune_gemm},
       {"breakdown", c.breakdown},
       {"decompose", c.decompose || c.breakdown},
       {"profile_steps", c.decompose || c.breakdown ? json(c.profile_steps) : json()},
       {"trace_out", c.trace_out.empty() ? json() : json(c.trace_out)},
       {"seed", c.seed},
       {"weights", c.weights.empty() ? json("random, seed") : json(c.weights)},
       {"tokens", c.tokens.empty() ? json(fmt::format("synthetic, uniform below {}", synthetic_token_bound(m.vocab)))
                                   : json(c.tokens)}};
}

namespace {

// A whole number from `lo` to `hi`, or a WorkError naming the record and the field.
int64_t count_in_range(const Fields& f, const char* key, int64_t lo, int64_t hi) {
  const json& v = f.raw().at(key);
  const double d = v.is_number() ? v.get<double>() : 0;
  if (!v.is_number() || !(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) || d != std::floor(d)) {
    throw WorkError(fmt::format("{}: \"{}\" must be a whole number from {} to {}, got {}", f.where(), key, lo, hi,
                                v.dump()));
  }
  return static_cast<int64_t>(d);
}

}  // namespace

TrainWorkload read_train_workload(const Fields& config) {
  const json& c = config.raw();
  TrainWorkload w;
  if (c.contains("model") && c.at("model").is_string()) w.model = c.at("model").get<std::string>();
  if (config.has("layers")) w.layers = count_in_range(config, "layers", 1, kMaxLayers);
  if (config.has("batch")) w.batch = count_in_range(config, "batch", 1, kMaxBatch);
  if (c.contains("dtype") && c.at("dtype").is_string()) w.dtype = c.at("dtype").get<std::string>();
  return w;
}

void to_json(json& j, const TrainStep& s) {
  auto opt = [](const std::optional<double>& v) { return or_null(v); };
  j = {{"type", "train_step"},         {"device", s.device},
       {"seqlen", s.seqlen},           {"batch", s.batch},
       {"step", s.step},               {"warmup", s.warmup},
       {"exec_time_ms", s.exec_time_ms}, {"tflops", opt(s.tflops)},
       {"mfu", opt(s.mfu)},            {"hfu", opt(s.hfu)},
       {"peak_mem_gib", opt(s.peak_mem_gib)}, {"peak_allocated_gib", opt(s.peak_allocated_gib)},
       {"device_used_gib", opt(s.device_used_gib)}, {"loss", opt(s.loss)},
       {"grad_norm", opt(s.grad_norm)}, {"flop", opt(s.flop)},
       {"attention_share", opt(s.attention_share)}};
  if (s.telemetry) j["telemetry"] = *s.telemetry;
  if (s.world_size) j["world_size"] = *s.world_size;
  if (s.slowest_rank) j["slowest_rank"] = *s.slowest_rank;
  if (s.exposed_comm_ms) j["exposed_comm_ms"] = *s.exposed_comm_ms;
  if (s.exposed_offload_ms) j["exposed_offload_ms"] = *s.exposed_offload_ms;
  if (s.exposed_checkpoint_copy_ms) j["exposed_checkpoint_copy_ms"] = *s.exposed_checkpoint_copy_ms;
  if (s.pinned_host_gib) j["pinned_host_gib"] = *s.pinned_host_gib;
  if (const auto& e = s.expert_tokens) j["expert_tokens"] = {{"min", e->min}, {"median", e->median}, {"max", e->max}};
  if (s.expert_gemm) j["expert_gemm"] = *s.expert_gemm;
}

std::optional<TrainStep::ExpertTokens> expert_tokens_of(std::vector<int64_t> rows) {
  if (rows.empty()) return std::nullopt;
  std::sort(rows.begin(), rows.end());
  const size_t n = rows.size();
  const double median = n % 2 ? static_cast<double>(rows[n / 2])
                              : (static_cast<double>(rows[n / 2 - 1]) + static_cast<double>(rows[n / 2])) / 2;
  return TrainStep::ExpertTokens{static_cast<double>(rows.front()), median, static_cast<double>(rows.back())};
}

namespace {

// A number that may be written as a JSON number or a JSON string ("140.60"), as benchmark.py does;
// `ours`: our records write numbers as numbers (null where one is unknown), so a string is a
// damaged or hand-edited record.
std::optional<double> loose_number(const Fields& f, const char* key, bool ours) {
  if (!f.has(key)) return std::nullopt;
  const json& v = f.raw().at(key);
  if (v.is_number()) return v.get<double>();
  if (v.is_string() && !ours) {
    // Decimal only: strtod reads hexadecimal ("0x10" as 16) and "nan" too.
    const std::string s = trim(v.get<std::string>());
    char* end = nullptr;
    errno = 0;
    const double d = std::strtod(s.c_str(), &end);
    const bool decimal = s.find_first_not_of("0123456789.eE+-") == std::string::npos;
    if (!s.empty() && decimal && end == s.c_str() + s.size() && errno == 0 && std::isfinite(d)) return d;
  }
  throw WorkError(fmt::format("{}: \"{}\" is not a number: {}", f.where(), key, printable(v.dump())));
}

// A boolean, or (benchmark.py's logs) "true"/"false" or 0/1; in our records a JSON boolean only.
bool loose_boolean(const Fields& f, const char* key, bool ours) {
  if (!f.has(key)) return false;
  const json& v = f.raw().at(key);
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string() && !ours) {
    const std::string s = to_lower(v.get<std::string>());
    if (s == "true") return true;
    if (s == "false") return false;
  }
  if (v.is_number_integer() && !ours) return v.get<int64_t>() != 0;
  throw WorkError(fmt::format("{}: \"{}\" is not a boolean: {}", f.where(), key, printable(v.dump())));
}

}  // namespace

TrainStep read_train_step(const Fields& f, int64_t index, bool ours) {
  TrainStep s;
  // Our records always say which step and whether it was a warm-up: left out or null, a warm-up
  // step would be counted as a steady one.
  for (const char* key : {"step", "warmup"}) {
    if (ours && (!f.raw().contains(key) || f.raw().at(key).is_null())) {
      throw WorkError(fmt::format("{}: \"{}\" is {}: a damaged or edited record", f.where(), key,
                                  f.raw().contains(key) ? "null" : "missing"));
    }
  }
  const double step = loose_number(f, "step", ours).value_or(static_cast<double>(index));
  if (!(step >= 0 && step <= 1e15) || step != std::floor(step)) {
    throw WorkError(fmt::format("{}: \"step\" must be a whole number from 0 to 1e15", f.where()));
  }
  s.step = static_cast<int64_t>(step);
  s.warmup = loose_boolean(f, "warmup", ours);
  const auto t = loose_number(f, "exec_time_ms", ours);
  if (!t) throw WorkError(fmt::format("{}: step has no \"exec_time_ms\"", f.where()));
  if (!(*t >= kMinMs) || !std::isfinite(*t)) {
    throw WorkError(fmt::format("{}: exec_time_ms must be a finite number of at least {:g} ms, got {}", f.where(),
                                kMinMs, f.raw().at("exec_time_ms").dump()));
  }
  s.exec_time_ms = *t;
  s.device = static_cast<int>(f.optional_count("device").value_or(0));
  s.batch = f.has("batch") ? count_in_range(f, "batch", 1, kMaxBatch) : 1;
  s.tflops = loose_number(f, "tflops", ours);
  s.mfu = loose_number(f, "mfu", ours);
  s.hfu = loose_number(f, "hfu", ours);
  s.peak_mem_gib = loose_number(f, "peak_mem_gib", ours);
  s.peak_allocated_gib = loose_number(f, "peak_allocated_gib", ours);
  s.device_used_gib = loose_number(f, "device_used_gib", ours);
  s.loss = loose_number(f, "loss", ours);
  s.grad_norm = loose_number(f, "grad_norm", ours);
  s.flop = loose_number(f, "flop", ours);
  s.attention_share = loose_number(f, "attention_share", ours);
  s.exposed_comm_ms = loose_number(f, "exposed_comm_ms", ours);
  s.exposed_offload_ms = loose_number(f, "exposed_offload_ms", ours);
  s.exposed_checkpoint_copy_ms = loose_number(f, "exposed_checkpoint_copy_ms", ours);
  s.pinned_host_gib = loose_number(f, "pinned_host_gib", ours);
  if (auto w = f.optional_count("world_size")) s.world_size = static_cast<int>(*w);
  if (auto r = f.optional_count("slowest_rank")) s.slowest_rank = static_cast<int>(*r);
  // A rate, a size or a share below zero is a damaged record, not a measurement; so is one beyond
  // anything a machine measures (a step of 1e308 ms gives an interval of 1e305x and a verdict).
  struct Bound {
    const char* name;
    const std::optional<double>* v;
    double max;
  };
  const Bound bounded[] = {
      {"tflops", &s.tflops, kMaxTflops}, {"mfu", &s.mfu, 10}, {"hfu", &s.hfu, 10}, {"peak_mem_gib", &s.peak_mem_gib, kMaxGib},
      {"peak_allocated_gib", &s.peak_allocated_gib, kMaxGib}, {"device_used_gib", &s.device_used_gib, kMaxGib},
      {"flop", &s.flop, 1e27}, {"attention_share", &s.attention_share, 1e9}, {"exposed_comm_ms", &s.exposed_comm_ms, kMaxMs},
      {"exposed_offload_ms", &s.exposed_offload_ms, kMaxMs},
      {"exposed_checkpoint_copy_ms", &s.exposed_checkpoint_copy_ms, kMaxMs}, {"pinned_host_gib", &s.pinned_host_gib, kMaxGib}};
  for (const auto& [name, v, max] : bounded) {
    if (*v && (!(**v >= 0) || !std::isfinite(**v))) {
      throw WorkError(fmt::format("{}: \"{}\" must be a finite number not below zero, got {}", f.where(), name, **v));
    }
    if (*v && **v > max) {
      throw WorkError(fmt::format("{}: \"{}\" is {:g}, beyond any measurement (at most {:g})", f.where(), name, **v, max));
    }
  }
  if (s.peak_mem_gib && *s.peak_mem_gib == 0) {  // a fit through it would find no limit in sight
    throw WorkError(fmt::format("{}: \"peak_mem_gib\" is 0: a step that ran held memory; leave the field out where it "
                                "was not measured", f.where()));
  }
  if (s.exec_time_ms > kMaxMs) {
    throw WorkError(fmt::format("{}: \"exec_time_ms\" is {:g}, beyond any measurement (at most {:g})", f.where(),
                                s.exec_time_ms, kMaxMs));
  }
  if (s.attention_share && *s.attention_share > 1) {
    throw WorkError(fmt::format("{}: \"attention_share\" is a fraction of the FLOPs, got {}", f.where(), *s.attention_share));
  }
  if (auto tel = f.optional_object("telemetry")) s.telemetry = read_telemetry(*tel);
  if (auto e = f.optional_object("expert_tokens")) {
    // Bounded by the step's tokens where it is read into its run (a step without "batch" is of the
    // run's, which the run's reader knows): refuse_expert_tokens_past.
    s.expert_tokens = read_expert_tokens(*e, 0);
  }
  if (f.has("expert_gemm")) s.expert_gemm = f.string("expert_gemm");
  return s;
}

void refuse_expert_tokens_past(const TrainStep::ExpertTokens& t, int64_t tokens, const std::string& where) {
  if (tokens > 0 && t.max > static_cast<double>(tokens)) {
    throw WorkError(fmt::format("{}: \"expert_tokens\" max {:g}: more than the step's {} tokens, and an expert takes a "
                                "token once at most", where, t.max, tokens));
  }
}

TrainStep::ExpertTokens read_expert_tokens(const Fields& e, int64_t tokens) {
  TrainStep::ExpertTokens t{static_cast<double>(e.count("min")), e.number("median"), static_cast<double>(e.count("max"))};
  if (!(t.min <= t.median && t.median <= t.max)) {
    throw WorkError(fmt::format("{}: \"expert_tokens\" {{min {:g}, median {:g}, max {:g}}} are not the least, median "
                                "and most of a step's tokens per expert", e.where(), t.min, t.median, t.max));
  }
  refuse_expert_tokens_past(t, tokens, e.where());
  if (t.max == 0) {
    throw WorkError(fmt::format("{}: \"expert_tokens\" are all 0: the router sends every token to its top-k experts, so "
                                "some expert took some", e.where()));
  }
  return t;
}

void to_json(json& j, const TrainMemory& m) {
  j = {{"type", "train_memory"}, {"seqlen", m.seqlen}, {"step", m.step}, {"phase", m.phase},
       {"memory", {{"allocated_gib", m.memory.allocated}, {"reserved_gib", m.memory.reserved},
                   {"peak_gib", m.memory.peak}, {"device_used_gib", m.memory.device_used}}}};
  if (m.rank) j["rank"] = *m.rank;
}

void to_json(json& j, const TrainFailure& f) {
  j = {{"type", f.oom ? "train_oom" : "train_error"}, {"device", f.device}, {"seqlen", f.seqlen},
       {"batch", f.batch}, {"error", f.error}};
  if (f.oom) j["what"] = f.what.empty() ? f.error : f.what;
  if (f.bytes) j["bytes"] = *f.bytes;
}

TrainFailure read_train_failure(const Fields& f) {
  TrainFailure x;
  x.oom = f.string_or("type", "") == "train_oom";
  x.device = static_cast<int>(f.optional_count("device").value_or(0));
  x.seqlen = f.positive_count("seqlen");
  x.batch = f.optional_count("batch").value_or(1);
  x.error = f.string_or("error", "");
  x.what = f.string_or("what", x.oom ? "out of memory" : "");
  if (auto b = f.optional_count("bytes")) x.bytes = static_cast<uint64_t>(*b);
  return x;
}

namespace {

json row_json(const BreakdownRow& r, double step_ms) {
  json j = {{"class", r.cls}, {"ms", r.ms}, {"share", step_ms > 0 ? r.ms / step_ms : 0}, {"launches", r.launches}};
  if (!r.label.empty()) j["label"] = r.label;
  if (r.flop > 0) j["flop"] = r.flop, j["tflops"] = r.tflops();
  if (r.bytes > 0) j["bytes"] = r.bytes, j["gbps"] = r.gbps();
  return j;
}

std::string rate(const BreakdownRow& r) {
  if (r.flop > 0) return fmt::format("{:7.1f} TFLOPS", r.tflops());
  if (r.bytes > 0) return fmt::format("{:7.0f} GB/s  ", r.gbps());
  return std::string(14, ' ');
}

}  // namespace

void to_json(json& j, const TrainBreakdown& b) {
  j = {{"type", "train_breakdown"}, {"device", b.device}, {"seqlen", b.seqlen}, {"step_ms", b.step_ms},
       {"classes", json::array()}, {"ops", json::array()}, {"gemm_algorithms", json::array()}};
  for (const BreakdownRow& r : b.classes) j["classes"].push_back(row_json(r, b.step_ms));
  for (const BreakdownRow& r : b.ops) j["ops"].push_back(row_json(r, b.step_ms));
  for (const GemmChoice& g : b.gemms) {
    j["gemm_algorithms"].push_back({{"shape", g.shape}, {"flop", g.flop}, {"candidates", g.candidates},
                                    {"chosen_rank", g.chosen_rank}, {"first_ms", g.first_ms}, {"best_ms", g.best_ms},
                                    {"tflops", tflops_from(g.flop, g.best_ms)}});
  }
}

std::string TrainBreakdown::table() const {
  std::string t = fmt::format("breakdown of the median profiled step (its kernels' time, CUPTI): {:.2f} ms\n", step_ms);
  for (const BreakdownRow& r : classes) {
    t += fmt::format("  {:<18} {:9.2f} ms {:5.1f}%  {}\n", r.cls, r.ms, 100 * r.ms / step_ms, rate(r));
  }
  t += "  by operation:\n";
  for (const BreakdownRow& r : ops) {
    t += fmt::format("    {:<18} {:<28} {:4}x {:9.2f} ms  {}\n", r.cls, r.label, r.launches, r.ms, rate(r));
  }
  return t;
}

void to_json(json& j, const SweepMax& s) {
  j = {{"type", "sweep_max"}, {"longest_fit", or_null(s.longest_fit)},
       {"shortest_out_of_memory", or_null(s.shortest_out_of_memory)}, {"granularity", s.granularity}};
}

}  // namespace ub
