// `attention` records; see attention_records.hpp and docs/records.md.
#include "records/attention_records.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "base/text.hpp"
#include "facts/packed_docs.hpp"
#include "records/measurement_bounds.hpp"

namespace ub {

using nlohmann::json;

void AttentionConfig::validate() const {
  if (seqlens.empty()) throw UsageError("attention: --seqlens is empty");
  for (int64_t s : seqlens) {
    if (s < 1 || s > (int64_t{1} << 24)) {
      throw UsageError(fmt::format("attention: sequence length {} is out of range (1..16M)", s));
    }
    check_documents(docs, s, "attention --docs");
  }
  if (doc_len < 0) throw UsageError("attention: --doc-len must not be negative");
  if (window < 0 || window > (int64_t{1} << 24)) {
    throw UsageError(fmt::format("attention: --window {} is out of range (0..16M; 0: none)", window));
  }
  if (window > 0 && !causal) throw UsageError("attention: a sliding window is causal: drop --non-causal or --window");
  if (doc_len > 0 && !docs.empty()) throw UsageError("attention: give --doc-len or --docs, not both");
  if (batch < 1 || batch > 4096) throw UsageError(fmt::format("attention: --batch {} is out of range (1..4096)", batch));
  if (check_samples < 2 || check_samples > 4096) throw UsageError("--check-samples must be within 2..4096");
  timing.validate();
}

std::vector<int64_t> AttentionConfig::documents(int64_t seqlen) const {
  if (!docs.empty()) return docs;
  if (doc_len > 0 && doc_len < seqlen) return split_documents(seqlen, doc_len);
  return {};
}

double attention_tolerance(Dtype d) { return d == Dtype::fp16 ? 2.5e-4 : kLoosestAttentionTolerance; }

bool AttentionCheck::ok() const {
  return !tensors.empty() && std::all_of(tensors.begin(), tensors.end(), [](const auto& t) { return t.ok(); });
}

std::string AttentionCheck::summary() const {
  for (const TensorCheck& t : tensors) {
    if (t.non_finite) return fmt::format("{}: {} non-finite values", t.name, t.non_finite);
    if (!t.ok()) return fmt::format("{}: NMSE {:.2e} above the tolerance {:.1e}", t.name, t.nmse, t.tolerance);
  }
  std::string s;
  for (const TensorCheck& t : tensors) s += fmt::format("{}{} {:.1e}", s.empty() ? "" : ", ", t.name, t.nmse);
  return s;
}

void to_json(json& j, const AttentionConfig& c) {
  j = {{"seqlens", c.seqlens},   {"batch", c.batch},       {"heads", c.heads},
       {"kv_heads", c.kv_heads}, {"head_dim", c.head_dim}, {"doc_len", c.doc_len},
       {"docs", c.docs},         {"causal", c.causal},     {"window", c.window},
       {"dtype", to_string(c.dtype)},
       {"fwd_only", c.fwd_only}, {"autotune", c.autotune}, {"check_samples", c.check_samples},
       {"seed", c.seed}};
  put_timing(j, c.timing);
}

void to_json(json& j, const AttentionCheck& c) {
  json tensors = json::object();
  for (const auto& t : c.tensors) {
    tensors[t.name] = {{"nmse", t.nmse}, {"max_abs_err", t.max_err}, {"max_abs_ref", t.max_ref},
                       {"tolerance", t.tolerance}, {"non_finite", t.non_finite}, {"ok", t.ok()}};
  }
  j = {{"ok", c.ok()}, {"rows_sampled", c.rows}, {"cols_sampled", c.cols}, {"tensors", tensors}};
}

void to_json(json& j, const AttentionRecord& r) {
  j = {{"type", r.oom ? "attention_oom" : "attention"},
       {"device", r.device}, {"seqlen", r.seqlen}, {"batch", r.batch}, {"heads", r.heads},
       {"kv_heads", r.kv_heads}, {"head_dim", r.head_dim}, {"causal", r.causal}, {"window", r.window}, {"dtype", r.dtype},
       {"doc_len", r.doc_len}, {"docs", r.docs}, {"longest_doc", r.longest_doc}, {"ragged", r.ragged},
       {"backend", r.backend}, {"flops_fwd", r.flops_fwd}, {"flops_fwd_bwd", r.flops_fwd_bwd}};
  if (!r.engine_fwd.empty()) j["engine_fwd"] = r.engine_fwd;
  if (!r.engine_bwd.empty()) j["engine_bwd"] = r.engine_bwd;
  auto timed = [](const std::vector<EngineTiming>& v) {
    json a = json::array();
    for (const auto& e : v) a.push_back({{"engine", e.engine}, {"ms", e.ms}});
    return a;
  };
  if (!r.engine_fwd_timed.empty()) j["engine_fwd_timed"] = timed(r.engine_fwd_timed);
  if (!r.engine_bwd_timed.empty()) j["engine_bwd_timed"] = timed(r.engine_bwd_timed);
  if (r.check) j["check"] = *r.check;
  if (!r.ok) {
    j["error"] = r.error;
    return;
  }
  if (r.fwd_time) j["fwd_time_ms"] = *r.fwd_time;
  j["fwd_ms"] = r.fwd_ms;
  j["fwd_tflops"] = r.fwd_tflops;
  if (r.fwd_bwd_time) j["fwd_bwd_time_ms"] = *r.fwd_bwd_time;
  if (r.fwd_bwd_ms) j["fwd_bwd_ms"] = *r.fwd_bwd_ms;
  if (r.fwd_bwd_tflops) j["fwd_bwd_tflops"] = *r.fwd_bwd_tflops;
  j["telemetry"] = r.telemetry;
  j["plans_built"] = r.plans_built;
  j["plan_cache_hits"] = r.plan_cache_hits;
}

namespace {

double non_negative(const Fields& f, const char* key) {
  if (!f.raw().contains(key) || !f.raw().at(key).is_number()) {
    throw WorkError(fmt::format("{}: expected a number \"{}\"", f.where(), key));
  }
  const double v = f.raw().at(key).get<double>();
  if (!std::isfinite(v) || v < 0) throw WorkError(fmt::format("{}: {} must be a finite non-negative number", f.where(), key));
  return v;
}

std::optional<double> optional_non_negative(const Fields& f, const char* key) {
  return f.has(key) ? std::optional<double>(non_negative(f, key)) : std::nullopt;
}

}  // namespace

AttentionRecord read_attention_point(const Fields& f) {
  AttentionRecord r;
  const double s = non_negative(f, "seqlen");
  if (s < 1 || s > 1e12 || s != std::floor(s)) throw WorkError(fmt::format("{}: seqlen must be a positive whole number", f.where()));
  r.seqlen = static_cast<int64_t>(s);
  r.fwd_ms = non_negative(f, "fwd_ms");
  r.fwd_tflops = non_negative(f, "fwd_tflops");
  r.fwd_bwd_ms = optional_non_negative(f, "fwd_bwd_ms");
  r.fwd_bwd_tflops = optional_non_negative(f, "fwd_bwd_tflops");
  // Ours: a point whose outputs failed the check against the reference timed something else.
  if (f.has("check")) {
    // A check says whether it passed and what it checked: the output and its statistics, and with
    // the backward pass the three gradients, each with its verdict, error and tolerance.
    const Fields check = f.object("check");
    const json& c = check.raw();
    if (!c.contains("ok") || !c["ok"].is_boolean()) {
      throw WorkError(fmt::format("{}: its check has no \"ok\" (true or false): whether it passed is not known", f.where()));
    }
    bool passed = c["ok"].get<bool>();
    const json none = json::object();
    const json& tensors = c.contains("tensors") && c["tensors"].is_object() ? c["tensors"] : none;
    std::vector<const char*> needed = {"O", "LSE"};
    if (r.fwd_bwd_ms) needed.insert(needed.end(), {"dQ", "dK", "dV"});
    for (const char* name : needed) {
      if (!tensors.contains(name) || !tensors[name].is_object()) {
        throw WorkError(fmt::format("{}: its check has no tensor {}: what it checked is not known", f.where(), name));
      }
    }
    for (const auto& item : tensors.items()) {
      const std::string name = item.key();  // (named, not bound: clang 14 captures no structured binding)
      const json& t = item.value();
      if (!t.is_object() || !t.contains("ok") || !t["ok"].is_boolean()) {
        throw WorkError(fmt::format("{}: its check of {} has no \"ok\" (true or false)", f.where(), printable(name)));
      }
      if (!t["ok"].get<bool>()) passed = false;
      if (t.contains("non_finite") && (!t["non_finite"].is_number() || t["non_finite"].get<double>() != 0)) passed = false;
      // Its error and tolerance say what "ok" rests on: an error past the tolerance (at most the
      // loosest the tool checks attention to) is a failed check, whatever its "ok" says.
      const auto figure = [&](const char* key) -> double {
        const double v = t.contains(key) && t[key].is_number() ? t[key].get<double>() : -1;
        if (!std::isfinite(v) || v < 0) {
          throw WorkError(fmt::format("{}: its check of {} has no \"{}\" (a number not below zero): what it passed on is "
                                      "not known", f.where(), printable(name), key));
        }
        return v;
      };
      const double nmse = figure("nmse"), tolerance = std::min(figure("tolerance"), kLoosestAttentionTolerance);
      if (!(nmse <= tolerance)) passed = false;
    }
    if (!passed) r.error = "its check against the reference failed";
  }
  r.flops_fwd = optional_non_negative(f, "flops_fwd").value_or(0);  // ours: the FLOPs the figures divide
  r.flops_fwd_bwd = optional_non_negative(f, "flops_fwd_bwd").value_or(0);
  // A time under a nanosecond, or no work done in it, is a damaged line, not a fast kernel.
  for (const auto& [name, v] : {std::pair{"fwd_ms", std::optional<double>(r.fwd_ms)}, {"fwd_bwd_ms", r.fwd_bwd_ms}}) {
    if (v && *v < kMinMs) throw WorkError(fmt::format("{}: \"{}\" is {:g}, less than any kernel takes ({:g} ms)", f.where(), name, *v, kMinMs));
  }
  for (const auto& [name, v] : {std::pair{"fwd_tflops", std::optional<double>(r.fwd_tflops)}, {"fwd_bwd_tflops", r.fwd_bwd_tflops}}) {
    if (v && !(*v > 0)) throw WorkError(fmt::format("{}: \"{}\" is 0: no work measured", f.where(), name));
  }
  for (const auto& [name, v] : {std::pair{"fwd_tflops", std::optional<double>(r.fwd_tflops)}, {"fwd_bwd_tflops", r.fwd_bwd_tflops}}) {
    if (v && *v > kMaxTflops) {
      throw WorkError(fmt::format("{}: \"{}\" is {:g}, beyond any measurement (at most {:g})", f.where(), name, *v, kMaxTflops));
    }
  }
  r.device = static_cast<int>(f.optional_count("device").value_or(0));
  r.batch = f.optional_count("batch").value_or(1);
  r.heads = f.optional_count("heads").value_or(0);
  r.kv_heads = f.optional_count("kv_heads").value_or(0);
  r.head_dim = f.optional_count("head_dim").value_or(0);
  r.causal = f.boolean_or("causal", true);
  r.window = f.optional_count("window").value_or(0);
  r.dtype = f.string_or("dtype", "");
  r.backend = f.string_or("backend", "");
  r.doc_len = f.optional_count("doc_len").value_or(0);
  r.docs = f.optional_count("docs").value_or(1);
  r.ragged = f.boolean_or("ragged", false);
  if (auto t = f.optional_object("fwd_time_ms")) r.fwd_time = read_time_stats(*t);
  if (auto t = f.optional_object("fwd_bwd_time_ms")) r.fwd_bwd_time = read_time_stats(*t);
  if (auto t = f.optional_object("telemetry")) r.telemetry = read_telemetry(*t);
  r.ok = true;
  return r;
}

json flash_attn_line(const AttentionRecord& r) {
  json line = {{"seqlen", r.seqlen}, {"fwd_ms", r.fwd_ms}, {"fwd_tflops", r.fwd_tflops}};
  if (r.fwd_bwd_ms) line["fwd_bwd_ms"] = *r.fwd_bwd_ms;
  if (r.fwd_bwd_tflops) line["fwd_bwd_tflops"] = *r.fwd_bwd_tflops;
  return line;
}

}  // namespace ub
