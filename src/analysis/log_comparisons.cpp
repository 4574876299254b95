// Comparisons of attention, decomposition and MAMF logs; see log_comparisons.hpp.
#include "analysis/log_comparisons.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.hpp"
#include "base/text.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "analysis/run_limits.hpp"
#include "analysis/spec_compare.hpp"
#include "records/fields.hpp"

namespace ub {

using nlohmann::json;

namespace {

std::optional<double> div(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *b == 0) return std::nullopt;
  return *a / *b;
}

// Every key either list has (the old list's in order, then the new one's others), with the item
// of each list that has it: f(old item or null, new item or null).
template <class T, class KeyOf, class F>
void pair_by(const std::vector<T>& o, const std::vector<T>& n, KeyOf key_of, F f) {
  using Key = decltype(key_of(o.front()));
  std::vector<Key> keys;
  for (const auto* list : {&o, &n}) {
    for (const T& x : *list) {
      if (std::find(keys.begin(), keys.end(), key_of(x)) == keys.end()) keys.push_back(key_of(x));
    }
  }
  auto find = [&](const std::vector<T>& v, const Key& k) -> const T* {
    const auto it = std::find_if(v.begin(), v.end(), [&](const T& x) { return key_of(x) == k; });
    return it == v.end() ? nullptr : &*it;
  };
  for (const Key& k : keys) f(find(o, k), find(n, k));
}

std::string header_or(const AttentionLog& l, const char* key) {
  return l.header.count(key) ? l.header.at(key) : "?";
}

}  // namespace

HardwareRatios hardware_ratios(const std::string& old_gpu, const std::string& new_gpu, const Catalog& catalog) {
  HardwareRatios h;
  const Accelerator* a = catalog.try_find(old_gpu);
  const Accelerator* b = catalog.try_find(new_gpu);
  h.old_id = a ? a->id : "", h.new_id = b ? b->id : "";
  if (!a || !b) return h;
  const SpecComparison sc = compare_specs(*a, *b);
  h.known = true;
  h.peak_bf16 = sc.ratios.peak.at(Dtype::bf16);
  h.peak_fp8 = sc.ratios.peak.at(Dtype::fp8);
  h.mamf_bf16 = sc.ratios.mamf_bf16;
  h.mamf_fp8 = sc.ratios.mamf_fp8;
  h.bandwidth = sc.ratios.bandwidth;
  return h;
}

std::vector<std::string> provenance_lines(const std::string& old_path, const Provenance& o, const std::string& new_path,
                                          const Provenance& n) {
  std::vector<std::string> out;
  for (const auto& [path, p] : {std::pair{old_path, o}, std::pair{new_path, n}}) {
    if (!p.measured()) out.push_back(not_measured_line(path, p));
  }
  return out;
}

namespace {

// What makes two attention points one problem, where both say it (0 or empty: not said).
std::string attention_shape_difference(const AttentionRecord& a, const AttentionRecord& b) {
  std::vector<std::string> d;
  const auto num = [&](const char* what, int64_t x, int64_t y) {
    if (x && y && x != y) d.push_back(fmt::format("{} {} vs {}", what, x, y));
  };
  num("batch", a.batch, b.batch);
  num("heads", a.heads, b.heads);
  num("kv heads", a.kv_heads, b.kv_heads);
  num("head dim", a.head_dim, b.head_dim);
  num("documents", a.docs, b.docs);
  if (a.causal != b.causal) d.push_back(fmt::format("causal {} vs {}", a.causal, b.causal));
  if (a.window != b.window) d.push_back(fmt::format("window {} vs {}", a.window, b.window));  // 0: none, said or not
  if (!a.dtype.empty() && !b.dtype.empty() && a.dtype != b.dtype) d.push_back(fmt::format("dtype {} vs {}", a.dtype, b.dtype));
  std::string out;
  for (const std::string& x : d) out += (out.empty() ? "" : ", ") + x;
  return out;
}

}  // namespace

AttentionComparison compare_attention(const AttentionLog& o, const AttentionLog& n, const Catalog& catalog) {
  // A speedup is of one problem on two GPUs: logs or points of different shapes are not paired.
  // A window, a batch or a dtype one log leaves out is none, one sequence and bf16, as
  // bench_flash_attn.py runs.
  const std::map<std::string, std::string> unsaid = {{"window", "0"}, {"batch", "1"}, {"dtype", "bf16"}};
  for (const char* key : {"causal", "window", "nheads", "nheads_kv", "heads", "kv_heads", "head_dim", "batch", "dtype"}) {
    const auto a = o.header.find(key), b = n.header.find(key);
    const auto otherwise = unsaid.find(key);
    const bool in_old = a != o.header.end(), in_new = b != n.header.end();
    if (!(in_old && in_new) && (otherwise == unsaid.end() || !(in_old || in_new))) continue;
    const auto value = [&](const auto& it, const AttentionLog& l) {
      return it != l.header.end() ? it->second : otherwise->second + " (not said)";
    };
    const std::string x = value(a, o), y = value(b, n);
    if (to_lower(x.substr(0, x.find(' '))) != to_lower(y.substr(0, y.find(' ')))) {
      throw UsageError(fmt::format("{} and {} measured different attention problems ({} {} vs {}, old vs new): "
                                   "measure both at one shape", printable(o.path), printable(n.path), key, printable(x),
                                   printable(y)));
    }
  }
  for (const AttentionRecord& a : o.points) {
    for (const AttentionRecord& b : n.points) {
      if (a.seqlen != b.seqlen) continue;
      if (const std::string why = attention_shape_difference(a, b); !why.empty()) {
        throw UsageError(fmt::format("{} and {} measured different attention problems at seqlen {} ({}, old vs new): "
                                     "measure both at one shape", o.path, n.path, a.seqlen, why));
      }
    }
  }
  // No kernel runs faster than its GPU's dense peak: a figure past it is not a measurement to
  // take a ratio of.
  for (const AttentionLog* l : {&o, &n}) refuse_impossible_attention(*l, catalog);
  AttentionComparison c;
  c.provenance = weaker(o.provenance, n.provenance);
  c.provenance_notes = provenance_lines(o.path, o.provenance, n.path, n.provenance);
  c.old_gpu = o.gpu, c.new_gpu = n.gpu;
  c.old_backend = header_or(o, "backend"), c.new_backend = header_or(n, "backend");
  c.hardware = hardware_ratios(o.gpu, n.gpu, catalog);
  pair_by(o.points, n.points, [](const AttentionRecord& p) { return p.seqlen; },
          [&](const AttentionRecord* a, const AttentionRecord* b) {
            AttentionComparisonRow r;
            r.seqlen = a ? a->seqlen : b->seqlen;
            if (a) r.old_fwd = a->fwd_tflops, r.old_fwd_bwd = a->fwd_bwd_tflops;
            if (b) r.new_fwd = b->fwd_tflops, r.new_fwd_bwd = b->fwd_bwd_tflops;
            r.fwd_speedup = div(r.new_fwd, r.old_fwd);
            r.fwd_bwd_speedup = div(r.new_fwd_bwd, r.old_fwd_bwd);
            c.rows.push_back(r);
          });
  std::sort(c.rows.begin(), c.rows.end(), [](const auto& x, const auto& y) { return x.seqlen < y.seqlen; });
  return c;
}

namespace {

bool in_guide_buckets(const DecompositionLog& l) {
  return std::any_of(l.buckets.begin(), l.buckets.end(), [](const DecompositionBucket& b) { return b.name == "attention(FA)"; });
}

// `decompose`'s buckets folded into bench_decompose.py's three, by its method: the step split by
// the attention share of compute kernel time (collectives, copies and idle follow that split).
DecompositionLog as_guide_buckets(const DecompositionLog& l) {
  double step = 0, attention = 0, compute = 0;
  std::optional<double> attention_tflop, dense_tflop;
  for (const DecompositionBucket& b : l.buckets) {
    step += b.ms;
    if (b.name == "communication" || b.name == "memory copies" || b.name == "idle") continue;
    compute += b.ms;
    if (b.name == "attention") attention = b.ms, attention_tflop = b.tflop;
    if (b.name == "gemm") dense_tflop = b.tflop;
  }
  DecompositionLog out = l;
  out.buckets.clear();
  const double t_att = compute > 0 ? step * attention / compute : 0;
  auto rate = [](std::optional<double> tflop, double ms) -> std::optional<double> {
    if (!tflop || ms <= 0) return std::nullopt;
    return *tflop / (ms / 1e3);
  };
  std::optional<double> total_tflop;
  if (attention_tflop && dense_tflop) total_tflop = *attention_tflop + *dense_tflop;
  out.buckets.push_back({"attention(FA)", t_att, attention_tflop, rate(attention_tflop, t_att), std::nullopt});
  out.buckets.push_back({"everything else", step - t_att, dense_tflop, rate(dense_tflop, step - t_att), std::nullopt});
  out.buckets.push_back({"TOTAL", step, total_tflop, rate(total_tflop, step), std::nullopt});
  out.warnings.push_back("buckets folded into bench_decompose.py's three (attention by its share of compute kernel "
                         "time) to compare with its printout");
  return out;
}

}  // namespace

namespace {

// Each bucket's work, where it says its FLOPs (TOTAL excepted): what one workload has on any GPU.
std::map<std::string, double> bucket_work(const DecompositionLog& l) {
  std::map<std::string, double> work;
  for (const DecompositionBucket& b : l.buckets) {
    if (b.name != "TOTAL" && b.tflop && *b.tflop > 0) work[b.name] = *b.tflop;
  }
  return work;
}

}  // namespace

DecompositionComparison compare_decomposition(const DecompositionLog& old_said, const DecompositionLog& new_said,
                                              const Catalog& catalog, bool force) {
  // A printout without its TOTAL line is compared by the step its buckets add up to.
  const DecompositionLog old_log = with_total_line(old_said), new_log = with_total_line(new_said);
  refuse_impossible_decomposition(old_log, catalog);
  refuse_impossible_decomposition(new_log, catalog);
  // Buckets of one step on two GPUs: steps of other lengths, depths or batches (where both say
  // theirs) are another workload; --force compares them, said first.
  std::vector<std::string> workload;
  const auto refuse_other = [&](const std::string& what, const std::string& a, const std::string& b, const char* what_to_do) {
    if (a == b) return;
    if (!force) {
      throw UsageError(fmt::format("{} and {} decompose steps of different {} ({} vs {}, old vs new): {}, or --force to "
                                   "compare them anyway", printable(old_log.path), printable(new_log.path), what,
                                   printable(a), printable(b), what_to_do));
    }
    workload.push_back(fmt::format("{} {} vs {}", what, printable(a), printable(b)));
  };
  if (old_log.seqlen && new_log.seqlen) {
    refuse_other("lengths", fmt::format("{} tokens", *old_log.seqlen), fmt::format("{} tokens", *new_log.seqlen),
            "decompose both at one length");
  }
  // Two printouts: a lever or a batch one leaves out is bench_decompose.py's default (one sequence,
  // no recompute, no sharding, one GPU), as between two benchmark.py logs.
  // A printout beside our records: each says its batch (bs= or batch=, our records' batch).
  const bool printouts = old_log.records.empty() && new_log.records.empty();
  const auto says_batch = [](const DecompositionLog& l) { return l.header.count("batch") || l.header.count("bs"); };
  if (printouts || (says_batch(old_log) && says_batch(new_log))) {
    const auto batch = [&](const DecompositionLog& l) {
      return std::to_string(l.batch) + (says_batch(l) ? "" : " (not said)");
    };
    if (old_log.batch != new_log.batch) {
      refuse_other("batches", batch(old_log), batch(new_log), "decompose one workload on both GPUs");
    }
  }
  if (const auto a = old_log.header.find("layers"), b = new_log.header.find("layers");
      a != old_log.header.end() && b != new_log.header.end()) {
    refuse_other("depths", a->second, b->second, "decompose one workload on both GPUs");
  }
  // bench_decompose.py's memory levers and sharding make another step as much as the length does
  // (recomputed layers, sharded state, work moved to the host): --force compares them, said.
  std::vector<std::string> levers;
  for (const char* key : {"gc", "zero", "offload", "liger", "world_size"}) {
    const auto a = old_log.header.find(key), b = new_log.header.find(key);
    const bool in_old = a != old_log.header.end(), in_new = b != new_log.header.end();
    if (!(in_old && in_new) && !(printouts && (in_old || in_new))) continue;
    const std::string unsaid = fmt::format("{} (not said)", key == std::string("world_size") ? "1" : "0");
    const std::string x = in_old ? a->second : unsaid, y = in_new ? b->second : unsaid;
    if (x.substr(0, x.find(' ')) != y.substr(0, y.find(' '))) {
      levers.push_back(fmt::format("{} {} vs {}", key, printable(x), printable(y)));
    }
  }
  if (!levers.empty() && !force) {
    throw UsageError(fmt::format("{} and {} decompose steps with different levers ({}, old vs new): not the same "
                                 "workload; --force compares them anyway", printable(old_log.path),
                                 printable(new_log.path), fmt::join(levers, ", ")));
  }
  // One workload does the same work on any GPU: steps of other depths, lengths or batches do not.
  // Compared bucket by bucket where both say a bucket's FLOPs, and as a whole where every bucket
  // of both says them.
  const std::map<std::string, double> old_work = bucket_work(old_log), new_work = bucket_work(new_log);
  // --force compares them, said: our engine counts the FLOPs its kernels execute (FlashAttention's
  // backward recomputes the scores), a trace read with --model the model's, so `vs_peer.sh
  // decompose` sets the two side by side knowingly.
  std::vector<std::string> other_work;
  const auto refuse_work = [&](const std::string& what, double o_tflop, double n_tflop) {
    if (std::abs(n_tflop / o_tflop - 1) <= 0.02) return;
    const std::string differs = fmt::format("{}: {} vs {} TFLOP, old vs new", what, fixed_decimals(o_tflop, 2),
                                            fixed_decimals(n_tflop, 2));
    if (!force) {
      throw UsageError(fmt::format("{} and {} decompose steps of different work ({}: another depth, length or batch): "
                                   "decompose one workload on both GPUs, or --force to compare them anyway",
                                   printable(old_log.path), printable(new_log.path), differs));
    }
    other_work.push_back(differs);
  };
  bool work_checked = false;
  // A printout beside our buckets: their dense work, "everything else" once ours are folded into
  // bench_decompose.py's three (attention is not compared: ours counts FlashAttention's recompute).
  const bool fold = in_guide_buckets(old_log) != in_guide_buckets(new_log);
  const DecompositionLog o = fold && !in_guide_buckets(old_log) ? as_guide_buckets(old_log) : old_log;
  const DecompositionLog n = fold && !in_guide_buckets(new_log) ? as_guide_buckets(new_log) : new_log;
  if (fold) {
    const auto dense = [](const DecompositionLog& l) -> std::optional<double> {
      for (const DecompositionBucket& b : l.buckets) {
        if (b.name == "everything else" && b.tflop && *b.tflop > 0) return b.tflop;
      }
      return std::nullopt;
    };
    if (const auto a = dense(o), b = dense(n); a && b) refuse_work("everything else (the dense work)", *a, *b), work_checked = true;
  }
  for (const auto& [name, tflop] : old_work) {
    if (const auto it = new_work.find(name); it != new_work.end()) refuse_work(printable(name), tflop, it->second), work_checked = true;
  }
  const auto total = [](const std::map<std::string, double>& w) {
    double t = 0;
    for (const auto& [name, tflop] : w) t += tflop;
    return t;
  };
  const auto all_said = [](const DecompositionLog& l, const std::map<std::string, double>& w) {
    return !w.empty() && w.size() + static_cast<size_t>(std::count_if(l.buckets.begin(), l.buckets.end(),
                                                                       [](const auto& b) { return b.name == "TOTAL"; })) ==
                             l.buckets.size();
  };
  if (all_said(old_log, old_work) && all_said(new_log, new_work)) {
    refuse_work("the step", total(old_work), total(new_work)), work_checked = true;
  }
  std::vector<std::string> unchecked;
  if (!old_log.seqlen || !new_log.seqlen) unchecked.push_back("their lengths");
  if (!work_checked) unchecked.push_back("their work (FLOPs)");
  // Nothing says the two steps are one workload: a 2-layer 4k step against an 8B 8k one read as
  // the new GPU 8x slower.
  if (unchecked.size() == 2 && !force) {
    throw UsageError(fmt::format("{} and {}: neither their lengths nor their work (FLOPs) are in both files, so nothing "
                                 "says they decompose one workload; --force compares them anyway",
                                 printable(old_log.path), printable(new_log.path)));
  }
  DecompositionComparison c;
  c.old_gpu = o.gpu, c.new_gpu = n.gpu;
  c.provenance = weaker(old_log.provenance, new_log.provenance);
  c.provenance_notes = provenance_lines(old_log.path, old_log.provenance, new_log.path, new_log.provenance);
  c.old_path = o.path, c.new_path = n.path;
  if (o.summary.count("step")) c.old_step_ms = o.summary.at("step");
  if (n.summary.count("step")) c.new_step_ms = n.summary.at("step");
  c.hardware = hardware_ratios(o.gpu, n.gpu, catalog);
  for (const DecompositionLog* l : {&o, &n}) {
    for (const std::string& w : l->warnings) c.warnings.push_back(l->path + ": " + w);
  }
  c.warnings.insert(c.warnings.begin(), workload.size(), "");
  for (size_t i = 0; i < workload.size(); ++i) c.warnings[i] = "forced: a different workload: " + workload[i];
  for (const std::string& l : levers) c.warnings.push_back("forced: different levers: " + l);
  for (const std::string& w : other_work) c.warnings.push_back("forced: different work: " + w);
  if (!unchecked.empty()) {
    c.warnings.push_back(fmt::format("{}one workload on both sides is assumed, not checked: {} are not in both files",
                                     unchecked.size() == 2 ? "forced: " : "", fmt::join(unchecked, " and ")));
  }
  pair_by(o.buckets, n.buckets, [](const DecompositionBucket& x) { return x.name; },
          [&](const DecompositionBucket* a, const DecompositionBucket* b) {
            DecompositionComparisonRow r;
            r.bucket = a ? a->name : b->name;
            if (a) r.old_ms = a->ms, r.old_tflops = a->tflops;
            if (b) r.new_ms = b->ms, r.new_tflops = b->tflops;
            r.speedup = div(r.old_ms, r.new_ms);
            c.rows.push_back(r);
          });
  return c;
}

namespace {

std::string versions(const MamfLog& l) {
  std::string out;
  for (const auto& [name, version] : l.stack) out += (out.empty() ? "" : ", ") + name + "=" + version;
  return out.empty() ? "not recorded" : out;
}

}  // namespace

MamfComparison compare_mamf(const MamfLog& o, const MamfLog& n, const Catalog& catalog, bool force) {
  MamfComparison c;
  c.old_gpu = o.gpu, c.new_gpu = n.gpu;
  c.provenance = weaker(o.provenance, n.provenance);
  c.provenance_notes = provenance_lines(o.path, o.provenance, n.path, n.provenance);
  c.old_format = o.format, c.new_format = n.format;
  c.old_dtype = o.dtype, c.new_dtype = n.dtype;
  c.old_shapes = o.outcome.shapes.size(), c.new_shapes = n.outcome.shapes.size();
  if (!o.dtype.empty() && !n.dtype.empty() && o.dtype != n.dtype) {
    if (!force) {
      throw UsageError(fmt::format("compare: {} measured {} and {} measured {}: the matmul ceiling of one dtype "
                                   "against another's is not a speedup (--force compares them anyway)",
                                   o.path, o.dtype, n.path, n.dtype));
    }
    c.notes.push_back(fmt::format("DIFFERENT DTYPES: {} (old) against {} (new), compared because of --force: the "
                                  "ratios mix the GPU and the dtype.", o.dtype, n.dtype));
  }
  // No matmul runs past its GPU's dense peak in its dtype: a shape past it is not a ceiling.
  for (const MamfLog* l : {&o, &n}) refuse_impossible_ceiling(*l, catalog);
  for (const MamfLog* l : {&o, &n}) {
    if (l->dtype.empty()) c.notes.push_back(fmt::format("{}: the dtype is not said; assumed the same.", l->path));
    // What the reader left out (a damaged shape line, other GPUs' shapes) is said beside the ratios.
    for (const std::string& w : l->warnings) c.notes.push_back(w.rfind(l->path, 0) == 0 ? w : l->path + ": " + w);
  }
  c.same_gpu = !o.gpu_uuid.empty() && o.gpu_uuid == n.gpu_uuid;
  if (c.same_gpu) {
    c.notes.push_back(fmt::format("Same GPU ({}): both runs measured one device, so the ratios are the run-to-run "
                                  "and software differences, not a hardware one.", o.gpu_uuid));
  }
  c.notes.push_back(fmt::format("Software: old {}; new {}.", versions(o), versions(n)));
  if (!o.ranges.empty() || !n.ranges.empty()) {
    c.notes.push_back(fmt::format("Shapes: old {}; new {}.", o.ranges.empty() ? "as listed" : o.ranges,
                                  n.ranges.empty() ? "as listed" : n.ranges));
  }
  c.hardware = hardware_ratios(o.gpu, n.gpu, catalog);
  const std::pair<MamfOutcome::By, const char*> kinds[] = {
      {MamfOutcome::By::mean, "mean"}, {MamfOutcome::By::median, "median"}, {MamfOutcome::By::max, "max"}};
  for (const auto& [by, name] : kinds) {
    MamfComparisonRow r;
    r.best = name;
    if (const auto a = o.best(by)) r.old_tflops = tflops_by(*a, by), r.old_shape = a->shape();
    if (const auto b = n.best(by)) r.new_tflops = tflops_by(*b, by), r.new_shape = b->shape();
    r.ratio = div(r.new_tflops, r.old_tflops);
    c.rows.push_back(r);
  }
  // mamf-finder's means over every shape (of each shape's mean TFLOPS): how the GPU does across
  // the range, not only at its best shape.
  const std::pair<std::optional<double> MamfLog::*, const char*> means[] = {
      {&MamfLog::arithmetic_mean, "arithmetic mean"}, {&MamfLog::geometric_mean, "geometric mean"}};
  for (const auto& [field, name] : means) {
    MamfComparisonRow r;
    r.best = name;
    r.old_tflops = o.*field, r.new_tflops = n.*field;
    r.ratio = div(r.new_tflops, r.old_tflops);
    c.rows.push_back(r);
  }
  return c;
}

void to_json(json& j, const HardwareRatios& h) {
  if (!h.known) {
    j = nullptr;
    return;
  }
  j = {{"peak_bf16", or_null(h.peak_bf16)}, {"peak_fp8", or_null(h.peak_fp8)}, {"mamf_bf16", or_null(h.mamf_bf16)},
       {"mamf_fp8", or_null(h.mamf_fp8)}, {"bandwidth", or_null(h.bandwidth)}};
}

void to_json(json& j, const AttentionComparison& c) {
  json rows = json::array();
  for (const auto& r : c.rows) {
    rows.push_back({{"seqlen", r.seqlen}, {"old_fwd_tflops", or_null(r.old_fwd)}, {"new_fwd_tflops", or_null(r.new_fwd)},
                    {"fwd_speedup", or_null(r.fwd_speedup)}, {"old_fwd_bwd_tflops", or_null(r.old_fwd_bwd)},
                    {"new_fwd_bwd_tflops", or_null(r.new_fwd_bwd)}, {"fwd_bwd_speedup", or_null(r.fwd_bwd_speedup)}});
  }
  j = {{"kind", "attention"}, {"old_gpu", c.old_gpu}, {"new_gpu", c.new_gpu}, {"data", c.provenance.tag()},
       {"hardware_ratios", c.hardware}, {"rows", rows}};
}

void to_json(json& j, const DecompositionComparison& c) {
  json rows = json::array();
  for (const auto& r : c.rows) {
    rows.push_back({{"bucket", r.bucket}, {"old_ms", or_null(r.old_ms)}, {"new_ms", or_null(r.new_ms)},
                    {"speedup", or_null(r.speedup)}, {"old_tflops", or_null(r.old_tflops)},
                    {"new_tflops", or_null(r.new_tflops)}});
  }
  j = {{"kind", "decomposition"}, {"old_gpu", c.old_gpu}, {"new_gpu", c.new_gpu}, {"data", c.provenance.tag()},
       {"hardware_ratios", c.hardware}, {"rows", rows}, {"warnings", c.warnings}};
}

void to_json(json& j, const MamfComparison& c) {
  json rows = json::array();
  for (const auto& r : c.rows) {
    rows.push_back({{"best", r.best}, {"old_tflops", or_null(r.old_tflops)}, {"old_shape", or_null(r.old_shape)},
                    {"new_tflops", or_null(r.new_tflops)}, {"new_shape", or_null(r.new_shape)}, {"ratio", or_null(r.ratio)}});
  }
  j = {{"kind", "mamf"},        {"old_gpu", c.old_gpu},     {"new_gpu", c.new_gpu},   {"data", c.provenance.tag()},
       {"old_dtype", c.old_dtype},
       {"new_dtype", c.new_dtype}, {"same_gpu", c.same_gpu},  {"hardware_ratios", c.hardware}, {"rows", rows},
       {"notes", c.notes}};
}

BandwidthComparison compare_bandwidth(const BandwidthLog& o, const BandwidthLog& n, const Catalog& catalog) {
  BandwidthComparison c;
  c.old_gpu = o.gpu, c.new_gpu = n.gpu;
  c.provenance = weaker(o.provenance, n.provenance);
  c.provenance_notes = provenance_lines(o.path, o.provenance, n.path, n.provenance);
  c.hardware = hardware_ratios(o.gpu, n.gpu, catalog);
  // No copy out of HBM runs past its GPU's memory bandwidth (L2-resident sizes may: left out).
  for (const BandwidthLog* l : {&o, &n}) refuse_impossible_bandwidth(*l, catalog);
  const auto find = [](const BandwidthLog& l, const std::string& op, int64_t bytes) -> const BandwidthRecord* {
    for (const BandwidthRecord& r : l.points) {
      if (r.op == op && r.bytes == bytes && r.ok) return &r;
    }
    return nullptr;
  };
  for (const BandwidthRecord& r : o.points) {
    BandwidthComparisonRow row{r.op, r.bytes, r.in_l2, {}, {}, {}};
    if (r.ok) row.old_gbps = r.median_gbps;
    if (const BandwidthRecord* m = find(n, r.op, r.bytes)) {
      // Another kernel (the driver's memcpy against a tiled copy) is another measurement of the GPU.
      if (r.ok && !r.kernel.empty() && !m->kernel.empty() && r.kernel != m->kernel) {
        throw UsageError(fmt::format("{} and {} timed {} of {} bytes with different kernels ({} vs {}, old vs new): "
                                     "measure both with one --kernel", printable(o.path), printable(n.path), r.op,
                                     r.bytes, printable(r.kernel), printable(m->kernel)));
      }
      row.new_gbps = m->median_gbps;
    }
    if (row.old_gbps && row.new_gbps && *row.old_gbps > 0) row.ratio = *row.new_gbps / *row.old_gbps;
    c.rows.push_back(row);
  }
  for (const BandwidthRecord& r : n.points) {
    if (!find(o, r.op, r.bytes) && r.ok) c.rows.push_back({r.op, r.bytes, r.in_l2, std::nullopt, r.median_gbps, std::nullopt});
  }
  const std::optional<double> a = o.hbm_gbps("copy"), b = n.hbm_gbps("copy");
  if (a && b && *a > 0) c.hbm_copy_ratio = *b / *a;
  return c;
}

void to_json(nlohmann::json& j, const BandwidthComparison& c) {
  const auto opt = [](std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  j = {{"old_gpu", c.old_gpu}, {"new_gpu", c.new_gpu}, {"data", c.provenance.tag()}, {"hardware", c.hardware},
       {"hbm_copy_ratio", opt(c.hbm_copy_ratio)}, {"rows", nlohmann::json::array()}};
  for (const BandwidthComparisonRow& r : c.rows) {
    j["rows"].push_back({{"op", r.op}, {"bytes", r.bytes}, {"in_l2", r.in_l2}, {"old_gbps", opt(r.old_gbps)},
                         {"new_gbps", opt(r.new_gbps)}, {"ratio", opt(r.ratio)}});
  }
}

}  // namespace ub
