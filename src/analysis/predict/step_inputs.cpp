// Reading predict's inputs; see step_inputs.hpp.
#include "analysis/predict/step_inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "base/error.hpp"
#include "base/text.hpp"
#include "facts/dtype.hpp"
#include "analysis/run_limits.hpp"
#include "records/readers/bandwidth_log.hpp"
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
#include "records/workload_keys.hpp"
#include "analysis/predict/sweep_fit.hpp"
#include "facts/step_gemms.hpp"
#include "base/units.hpp"

namespace ub {

WorkKind work_kind_of(const std::string& bucket) {
  if (bucket == "gemm") return WorkKind::matmul;
  if (bucket == "attention" || bucket == "attention(FA)") return WorkKind::attention;
  // A mixture of experts' routing and permutation are gathers and scatters: HBM bandwidth too.
  if (bucket == "elementwise" || bucket == "loss" || bucket == "optimizer" || bucket == "routing") return WorkKind::memory;
  if (bucket == "everything else") return WorkKind::dense_mixed;
  if (bucket == "communication") return WorkKind::communication;
  if (bucket == "idle") return WorkKind::unexplained;
  if (bucket == "memory copies") return WorkKind::unscaled;
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
    in.buckets.push_back({b.name, b.ms, work_kind_of(b.name), b.tflop});
    if (b.tflop && (b.name == "gemm" || b.name == "attention")) tflop += *b.tflop, all_flops = true;
  }
  // Our engine counts what its kernels execute; the model's FLOPs (the MFU convention) come with
  // the model (add_model).
  if (all_flops) in.executed_tflop = tflop;
  return in;
}

// bench_decompose.py's printout: "attention(FA)", "everything else", "TOTAL".
StepInput from_printout(const DecompositionLog& d) {
  StepInput in;
  in.path = d.path;
  in.from = "decomposition (bench_decompose.py's printout: attention and everything else)";
  in.old_gpu = d.gpu;
  if (d.seqlen) in.seqlen = *d.seqlen;
  in.batch = d.batch;  // its bs= (or batch=): one sequence where it says none
  in.levers = levers_of(d.header, in.batch);
  in.format = "bench_decompose.py", in.workload = workload_of(d.header);
  for (const DecompositionBucket& b : d.buckets) {
    if (b.name == "TOTAL") {
      in.step_ms = b.ms;
      in.step_tflop = b.tflop;
      continue;
    }
    // The printout's FLOPs are the model's (MFU convention): with checkpointing the kernels did more.
    in.buckets.push_back({b.name, b.ms, work_kind_of(b.name), in.levers.checkpointing ? std::nullopt : std::optional<double>(b.tflop)});
  }
  if (in.step_ms <= 0) in.step_ms = printout_record(d).step_ms;  // no TOTAL line: the step its buckets split
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
  std::map<std::string, std::string> context_config;
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
      for (const auto& [k, v] : c.items()) {
        if (!v.is_null()) context_config[k] = v.is_string() ? v.get<std::string>() : v.dump();  // null: not known
      }
    } else if (r.type == "decomposition") {
      StepInput in = from_record(read_decomposition_record(Fields(r.json, r.where)), t.path);
      if (!in.seqlen) in.seqlen = context_seqlen;
      if (!r.json.contains("batch") && context_batch) in.batch = *context_batch;
      in.layers = context_layers;
      if (const auto it = context_config.find("model"); it != context_config.end() && !it->second.empty()) {
        in.model = it->second;
      }
      in.levers = levers_of(context_config, in.batch);
      in.format = "upgradebench", in.workload = workload_of(context_config);
      in.provenance = provenance;
      out.push_back(std::move(in));
    }
  }, warnings);
  if (out.empty()) throw WorkError(fmt::format("{}: no decomposition records", t.path));
  return out;
}

void add_model(StepInput& s, const ModelShape& m) {
  if (!s.model) s.model = m.id;
  if (!s.seqlen) return;
  if (!s.step_tflop) {
    FlopOptions fo;
    fo.batch = s.batch;
    s.step_tflop = to_tflop(step_flops(m, *s.seqlen, fo).total());
  }
  StepLevers levers = s.levers;
  levers.batch = s.batch;
  s.gemms = step_gemms(m, *s.seqlen, levers);
}

std::map<std::string, std::string> workload_of(const std::map<std::string, std::string>& config) {
  std::map<std::string, std::string> out;
  for (const auto& keys : {std::span<const char* const>(kOurLeverKeys), std::span<const char* const>(kOurFormerLeverKeys),
                           std::span<const char* const>(kBenchmarkPyLeverKeys), std::span<const char* const>(kOurStepKeys),
                           std::span<const char* const>(kBenchmarkPyStepKeys)}) {
    for (const char* key : keys) {
      if (const auto it = config.find(key); it != config.end()) out[key] = it->second;
    }
  }
  // bench_decompose.py's header says benchmark.py's offload_optim as "offload".
  if (const auto it = config.find("offload"); it != config.end() && !out.count("offload_optim")) out["offload_optim"] = it->second;
  if (const auto it = config.find("dtype"); it != config.end()) out["dtype"] = it->second;
  // The attention our records' step ran (benchmark.py's log says its attn_backend, kept above).
  if (const auto it = config.find("attention"); it != config.end()) out["attention"] = it->second;
  return out;
}

StepLevers levers_of(const std::map<std::string, std::string>& config, int64_t batch) {
  const auto text = [&](const char* key) {
    const auto it = config.find(key);
    return it == config.end() ? std::string() : it->second;
  };
  const auto count = [&](const char* key) -> int64_t {
    const std::string v = text(key);
    if (v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string::npos) return 0;
    return std::stoll(v);
  };
  StepLevers l;
  l.batch = batch;
  l.checkpointing = text("gc") == "1" || text("gc") == "true" || text("activation_checkpointing") == "true";
  l.mlp_tile = count("mlp_tile");
  l.loss_chunk = count("loss_chunk");
  return l;
}

namespace {

// A point of a log as `predict` reads it, before it is split.
struct LogPoint {
  int64_t seqlen = 0;
  double step_ms = 0;
  std::optional<double> peak_mem_gib;
  std::optional<double> share;  // attention share of FLOPs, as recorded
};

StepInput log_step(const RunLog& run, const LogPoint& p, const StepLevers& levers, const Provenance& provenance,
                   const std::string& path) {
  StepInput in;
  in.path = path;
  in.old_gpu = run.gpu;
  in.seqlen = p.seqlen;
  in.batch = run.batch;
  in.layers = run.layers;
  in.model = run.model;
  in.levers = levers;
  in.format = run.format, in.workload = workload_of(run.config);
  in.workload["dtype"] = run.dtype;
  in.step_ms = p.step_ms;
  in.peak_memory_gib = p.peak_mem_gib;
  in.provenance = provenance;
  return in;
}

// Each point split by the log's own fit: per-step time, dense work, attention.
std::vector<StepInput> fitted_steps(const RunLog& run, const std::vector<LogPoint>& points, const SweepFit& fit,
                                    const StepFlopsAt& flops, const StepLevers& levers, const Provenance& provenance,
                                    const std::string& path) {
  std::vector<StepInput> out;
  for (const LogPoint& p : points) {
    const StepFlops model = *flops(p.seqlen, false), work = *flops(p.seqlen, levers.checkpointing);
    const SweepPoint sp{p.seqlen, p.step_ms, to_tflop(model.dense), to_tflop(model.attention)};
    double dense = fit.dense_ms(sp), attention = fit.attention_ms(sp);
    // What the fit leaves of this step is time no kernel's work explains; a step shorter than its
    // work at the fitted rates is its work, scaled down.
    double rest = p.step_ms - dense - attention;
    if (rest < 0) {
      const double scale = p.step_ms / (dense + attention);
      dense *= scale, attention *= scale, rest = 0;
    }
    StepInput in = log_step(run, p, levers, provenance, path);
    in.from = fmt::format("training log decomposed by its own {} lengths (per step {:.0f} ms, dense work at {:.0f} and "
                          "attention at {:.0f} model TFLOPS; worst fit {:.1f}%)",
                          fit.points, fit.per_step_ms, fit.dense_tflops, fit.attention_tflops, 100 * fit.worst_residual);
    in.buckets = {{"per step (host, offload)", rest, WorkKind::unexplained, std::nullopt},
                  {"dense (GEMMs, memory-bound)", dense, WorkKind::dense_mixed, to_tflop(work.dense)},
                  {"attention", attention, WorkKind::attention, to_tflop(work.attention)}};
    in.step_tflop = to_tflop(model.total());
    out.push_back(std::move(in));
  }
  return out;
}

}  // namespace

std::vector<StepInput> steps_from_training_log(const RunLog& run, const Provenance& provenance, const StepFlopsAt& flops,
                                               double peak_tflops, std::vector<std::string>& warnings) {
  const StepLevers levers = levers_of(run.config, run.batch);
  std::vector<LogPoint> points;
  for (const RunPoint& p : run.points) {
    if (p.status != PointStatus::ok || !p.steps.has_steady()) continue;
    const PointStats st = point_stats(run, p);
    points.push_back({p.seqlen, st.time_ms.median, st.peak_mem_gib, p.steps.attention_share()});
  }
  // Three lengths or more of a known model: the log's own decomposition.
  std::string why_not = "the model is not known";
  if (flops && !points.empty() && flops(points.front().seqlen, false)) {
    std::vector<SweepPoint> sp;
    for (const LogPoint& p : points) {
      const StepFlops f = *flops(p.seqlen, false);
      sp.push_back({p.seqlen, p.step_ms, to_tflop(f.dense), to_tflop(f.attention)});
    }
    if (const auto fit = fit_sweep(sp, peak_tflops, why_not)) return fitted_steps(run, points, *fit, flops, levers, provenance, run.path);
  }
  if (points.size() > 1) warnings.push_back(fmt::format("{}: not decomposed by its own lengths: {}", run.path, why_not));
  std::vector<StepInput> out;
  for (const LogPoint& p : points) {
    const std::optional<StepFlops> model = flops ? flops(p.seqlen, false) : std::nullopt;
    const std::optional<double> share = p.share ? p.share : model ? std::optional<double>(model->attention_share()) : std::nullopt;
    if (!share) {
      warnings.push_back(fmt::format("{}: seqlen {} left out: its attention share of FLOPs is unknown (give --model)",
                                     run.path, p.seqlen));
      continue;
    }
    StepInput in = log_step(run, p, levers, provenance, run.path);
    in.from = "training log, the median step split by its attention share of FLOPs (no decomposition: the "
              "attention kernels are assumed to run at the step's average rate)";
    const std::optional<double> dense_work =
        model ? std::optional<double>(to_tflop(flops(p.seqlen, levers.checkpointing)->dense)) : std::nullopt;
    in.buckets = {{"attention", in.step_ms * *share, WorkKind::attention, std::nullopt},
                  {"everything else", in.step_ms * (1 - *share), WorkKind::dense_mixed, dense_work}};
    if (model) in.step_tflop = to_tflop(model->total());
    out.push_back(std::move(in));
  }
  // Lengths measured and none split for want of the model: the model is what is missing (an option).
  if (out.empty() && !points.empty() && !(flops && flops(points.front().seqlen, false))) {
    throw UsageError(run.model ? fmt::format("{}: its model {} is not known here, so its steps cannot be split by their "
                                             "attention share: give --model", run.path, printable(*run.model))
                               : fmt::format("{}: names no model (benchmark.py's model_size=, our records' model), so its "
                                             "steps cannot be split by their attention share: give --model", run.path));
  }
  if (out.empty()) throw WorkError(fmt::format("{}: no measured point to predict from", run.path));
  return out;
}

namespace {

std::string not_measured(const std::string& path) {
  return fmt::format("{}: not a micro-benchmark predict reads (mamf, attention, bandwidth or nccl records, "
                     "mamf-finder.py output, bench_flash_attn.py lines)", path);
}

}  // namespace

MeasuredFile read_measured(const LineSource& t, const Catalog& catalog) {
  MeasuredFile m;
  m.rates.files.push_back(t.path);
  const LogKind kind = detect_log_kind(t);
  switch (kind) {
    case LogKind::mamf: {
      const MamfLog l = read_mamf_log(t);
      refuse_impossible_ceiling(l, catalog);
      m.gpu = l.gpu;
      if (l.dtype != "bf16" && !l.dtype.empty()) {
        throw UsageError(fmt::format("{}: a MAMF run of {}; predict scales bf16 GEMMs by bf16 MAMF", t.path, l.dtype));
      }
      // Each shape timed in full: its median time per call, for the shape-by-shape GEMM ratio. A
      // step's own products (`mamf --shapes-of`) are not a search for the ceiling: only those.
      bool step_shapes = false;
      for (const MamfShape& s : l.outcome.shapes) {
        step_shapes = step_shapes || s.listed.has_value();
        if (s.ok && !s.quick && s.median_tflops > 0) m.rates.gemm_shapes.push_back({s.m, s.n, s.k, ms_at(s.flops(), s.median_tflops)});
      }
      if (const auto best = l.best(MamfOutcome::By::median); best && !step_shapes) m.rates.mamf_tflops = best->median_tflops;
      return m;
    }
    case LogKind::attention: {
      const AttentionLog l = read_attention_log(t);
      refuse_impossible_attention(l, catalog);
      m.gpu = l.gpu;
      // As for MAMF: the step's attention is bf16's (a log that does not say its dtype is, as
      // bench_flash_attn.py runs).
      std::string dtype = l.header.count("dtype") ? l.header.at("dtype") : "";
      for (const AttentionRecord& p : l.points) dtype = p.dtype.empty() ? dtype : p.dtype;
      if (!dtype.empty() && parse_dtype(dtype) != Dtype::bf16) {
        throw UsageError(fmt::format("{}: an attention run of {}; predict scales bf16 attention by bf16 attention runs",
                                     t.path, printable(dtype)));
      }
      for (const AttentionRecord& p : l.points) {
        if (p.ok && p.fwd_bwd_tflops) m.rates.attention_tflops.emplace_back(p.seqlen, *p.fwd_bwd_tflops);
      }
      m.attention = l;
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
    case LogKind::unknown: break;
    default:  // a training log, a decomposition, a prediction: a step, not a micro-benchmark
      throw UsageError(fmt::format("{}: {}, not a micro-benchmark predict reads (mamf, attention, bandwidth or nccl "
                                   "records, mamf-finder.py output, bench_flash_attn.py lines)",
                                   t.path, to_string(kind)));
  }
  // `bandwidth` records: the fastest device-to-device copy out of cache, as every reader reads
  // it (a point whose check failed timed something else). Anything else is refused before a pass
  // over it: an endless pipe of junk is not read to its end.
  if (!looks_like_records(t)) throw UsageError(not_measured(t.path));
  const BandwidthLog l = read_bandwidth_log(t);
  if (l.points.empty()) throw UsageError(not_measured(t.path));
  refuse_impossible_bandwidth(l, catalog);
  m.gpu = l.gpu;
  m.rates.hbm_gbps = l.hbm_gbps("copy");
  m.bandwidth = l;
  return m;
}

void merge(MeasuredRates& a, const MeasuredRates& b) {
  if (b.mamf_tflops) a.mamf_tflops = b.mamf_tflops;
  for (const ShapeTime& x : b.gemm_shapes) {
    std::erase_if(a.gemm_shapes, [&](const ShapeTime& y) { return y.m == x.m && y.n == x.n && y.k == x.k; });
    a.gemm_shapes.push_back(x);
  }
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
