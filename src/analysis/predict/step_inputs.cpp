// Reading predict's inputs; see step_inputs.hpp.
#include "analysis/predict/step_inputs.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.hpp"
#include "records/context_record.hpp"
#include "records/decomposition_records.hpp"
#include "records/readers/attention_log.hpp"
#include "records/readers/decomposition_log.hpp"
#include "records/readers/log_kind.hpp"
#include "records/readers/mamf_log.hpp"
#include "records/readers/nccl_log.hpp"
#include "records/readers/read_run.hpp"
#include "records/record_file.hpp"
#include "records/run_log.hpp"

namespace ub {

WorkKind work_kind_of(const std::string& bucket) {
  if (bucket == "gemm") return WorkKind::matmul;
  if (bucket == "attention" || bucket == "attention(FA)") return WorkKind::attention;
  if (bucket == "elementwise" || bucket == "loss" || bucket == "optimizer") return WorkKind::memory;
  if (bucket == "everything else") return WorkKind::dense_mixed;
  if (bucket == "communication") return WorkKind::communication;
  if (bucket == "memory copies" || bucket == "idle") return WorkKind::unscaled;
  return WorkKind::unknown;
}

namespace {

StepInput from_record(const DecompositionRecord& r, const std::string& path) {
  StepInput in;
  in.path = path;
  in.from = fmt::format("decomposition ({}, {})", r.source, r.steps_from);
  in.old_gpu = r.gpu;
  in.seqlen = r.seqlen;
  in.batch = r.batch;
  in.step_ms = r.step_ms;
  double tflop = 0;
  bool all_flops = false;
  for (const DecompositionBucketRecord& b : r.buckets) {
    in.buckets.push_back({b.name, b.ms, work_kind_of(b.name)});
    if (b.tflop && (b.name == "gemm" || b.name == "attention")) tflop += *b.tflop, all_flops = true;
  }
  if (all_flops) in.step_tflop = tflop;
  return in;
}

// bench_decompose.py's printout: "attention(FA)", "everything else", "TOTAL".
StepInput from_printout(const DecompositionLog& d) {
  StepInput in;
  in.path = d.path;
  in.from = "decomposition (bench_decompose.py's printout: attention and everything else)";
  in.old_gpu = d.gpu;
  if (auto it = d.header.find("seq"); it != d.header.end()) in.seqlen = std::stoll(it->second);
  for (const DecompositionBucket& b : d.buckets) {
    if (b.name == "TOTAL") {
      in.step_ms = b.ms;
      in.step_tflop = b.tflop;
      continue;
    }
    in.buckets.push_back({b.name, b.ms, work_kind_of(b.name)});
  }
  if (auto it = d.summary.find("peak_mem"); it != d.summary.end()) {
    try {
      in.peak_memory_gib = std::stod(it->second);
    } catch (const std::exception&) {
    }
  }
  return in;
}

}  // namespace

std::vector<StepInput> steps_from_decompositions(const LineSource& t) {
  std::vector<StepInput> out;
  const Provenance provenance = read_provenance(t);
  if (!looks_like_records(t)) {
    out.push_back(from_printout(read_decomposition_log(t)));
    out.back().provenance = provenance;
    return out;
  }
  std::vector<std::string> warnings;
  // Records written before decompositions carried their length: the run's context says it.
  std::optional<int64_t> context_seqlen, context_batch, context_layers;
  for_each_record(t, [&](const RecordLine& r) {
    if (r.type == "context" && r.json.contains("config") && r.json["config"].is_object()) {
      const nlohmann::json& c = r.json["config"];
      const auto count = [](const nlohmann::json& v) -> std::optional<int64_t> {
        if (v.is_number_integer() && v.get<int64_t>() > 0) return v.get<int64_t>();
        if (!v.is_string()) return std::nullopt;
        const std::string x = v.get<std::string>();
        const bool k = !x.empty() && (x.back() == 'k' || x.back() == 'K');
        const std::string digits = k ? x.substr(0, x.size() - 1) : x;
        if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
        return std::stoll(digits) * (k ? 1024 : 1);
      };
      if (c.contains("seqlen")) context_seqlen = count(c["seqlen"]);
      if (c.contains("batch")) context_batch = count(c["batch"]);
      if (c.contains("layers")) context_layers = count(c["layers"]);
    } else if (r.type == "decomposition") {
      StepInput in = from_record(read_decomposition_record(Fields(r.json, r.where)), t.path);
      if (!in.seqlen) in.seqlen = context_seqlen;
      if (!r.json.contains("batch") && context_batch) in.batch = *context_batch;
      in.layers = context_layers;
      in.provenance = provenance;
      out.push_back(std::move(in));
    }
  }, warnings);
  if (out.empty()) throw WorkError(fmt::format("{}: no decomposition records", t.path));
  return out;
}

std::vector<StepInput> steps_from_training_log(const LineSource& t,
                                               const std::function<std::optional<double>(int64_t)>& attention_share,
                                               const std::function<std::optional<double>(int64_t)>& step_tflop,
                                               std::vector<std::string>& warnings) {
  const RunLog run = read_run_log(t);
  const Provenance provenance = read_provenance(t);
  std::vector<StepInput> out;
  for (const RunPoint& p : run.points) {
    if (p.status != PointStatus::ok || !p.steps.has_steady()) continue;
    const PointStats st = point_stats(run, p);
    std::optional<double> share = p.steps.attention_share();
    if (!share) share = attention_share(p.seqlen);
    if (!share) {
      warnings.push_back(fmt::format("{}: seqlen {} left out: its attention share of FLOPs is unknown (give --model)",
                                     t.path, p.seqlen));
      continue;
    }
    StepInput in;
    in.path = t.path;
    in.from = "training log, the median step split by its attention share of FLOPs (no decomposition: the "
              "attention kernels are assumed to run at the step's average rate)";
    in.old_gpu = run.gpu;
    in.seqlen = p.seqlen;
    in.batch = run.batch;
    in.step_ms = st.time_ms.median;
    in.buckets = {{"attention", in.step_ms * *share, WorkKind::attention},
                  {"everything else", in.step_ms * (1 - *share), WorkKind::dense_mixed}};
    in.step_tflop = step_tflop(p.seqlen);
    in.peak_memory_gib = st.peak_mem_gib;
    in.provenance = provenance;
    out.push_back(std::move(in));
  }
  if (out.empty()) throw WorkError(fmt::format("{}: no measured point to predict from", t.path));
  return out;
}

MeasuredFile read_measured(const LineSource& t) {
  MeasuredFile m;
  m.rates.files.push_back(t.path);
  switch (detect_log_kind(t)) {
    case LogKind::mamf: {
      const MamfLog l = read_mamf_log(t);
      m.gpu = l.gpu;
      if (l.dtype != "bf16" && !l.dtype.empty()) {
        throw UsageError(fmt::format("{}: a MAMF run of {}; predict scales bf16 GEMMs by bf16 MAMF", t.path, l.dtype));
      }
      if (const auto best = l.best(MamfOutcome::By::median)) m.rates.mamf_tflops = best->median_tflops;
      return m;
    }
    case LogKind::attention: {
      const AttentionLog l = read_attention_log(t);
      m.gpu = l.gpu;
      for (const AttentionRecord& p : l.points) {
        if (p.ok && p.fwd_bwd_tflops) m.rates.attention_tflops.emplace_back(p.seqlen, *p.fwd_bwd_tflops);
      }
      return m;
    }
    case LogKind::nccl: {
      const NcclLog l = read_nccl_log(t);
      m.gpu = l.gpu;
      for (const NcclPoint& p : l.points) {
        if (p.record.collective == Collective::all_reduce && p.record.ok) {
          m.rates.busbw_gbps = std::max(m.rates.busbw_gbps.value_or(0), p.record.busbw_gbps);
        }
      }
      return m;
    }
    default: break;
  }
  // `bandwidth` records: the fastest device-to-device copy out of cache.
  std::vector<std::string> warnings;
  bool any = false;
  for_each_record(t, [&](const RecordLine& r) {
    if (r.type == "context") {
      const ContextRecord c = read_context(Fields(r.json, r.where));
      if (!c.fingerprint.gpus.empty()) m.gpu = c.fingerprint.gpus.front().name;
    } else if (r.type == "bandwidth") {
      any = true;
      const Fields f(r.json, r.where);
      if (f.string_or("op", "") != "copy" || r.json.value("in_l2", false) || !r.json.contains("gbps")) return;
      const double gbps = Fields(r.json["gbps"], r.where).number("median");
      m.rates.hbm_gbps = std::max(m.rates.hbm_gbps.value_or(0), gbps);
    }
  }, warnings);
  if (!any) {
    throw UsageError(fmt::format("{}: not a micro-benchmark predict reads (mamf, attention, bandwidth or nccl records, "
                                 "mamf-finder.py output, bench_flash_attn.py lines)", t.path));
  }
  return m;
}

void merge(MeasuredRates& a, const MeasuredRates& b) {
  if (b.mamf_tflops) a.mamf_tflops = b.mamf_tflops;
  if (b.hbm_gbps) a.hbm_gbps = b.hbm_gbps;
  if (b.busbw_gbps) a.busbw_gbps = b.busbw_gbps;
  for (const auto& x : b.attention_tflops) {
    std::erase_if(a.attention_tflops, [&](const auto& y) { return y.first == x.first; });
    a.attention_tflops.push_back(x);
  }
  std::sort(a.attention_tflops.begin(), a.attention_tflops.end());
  a.files.insert(a.files.end(), b.files.begin(), b.files.end());
}

}  // namespace ub
