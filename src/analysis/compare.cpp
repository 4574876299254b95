// Comparison of two runs; see compare.hpp.
#include "analysis/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <set>
#include <span>

#include "analysis/run_limits.hpp"
#include "analysis/spec_compare.hpp"
#include "base/error.hpp"
#include "base/text.hpp"
#include "facts/cost.hpp"
#include "facts/flops.hpp"
#include "base/units.hpp"
#include "records/workload_keys.hpp"

namespace ub {

namespace {

// The ml-engineering guide changes the attention backend with the GPU on purpose (FA3 on Hopper, FA4 on
// Blackwell): those differences are expected, everything else is not.
bool intended_difference(const std::string& key) {
  return key.find("flash-attn") != std::string::npos || key.find("flash_attn") != std::string::npos ||
         key == "attn_backend";
}

std::optional<Dtype> dtype_of(const RunLog& r) { return parse_dtype(r.dtype); }

}  // namespace

PointThroughput point_throughput(const RunLog& run, const RunPoint& p, const PointStats& stats,
                                 const std::optional<ModelShape>& model, const Accelerator* gpu) {
  PointThroughput t;
  if (stats.tflops) {
    t.tflops = stats.tflops->median;
  } else if (model) {
    FlopOptions fo;
    fo.batch = run.batch;
    t.tflops = tflops_from(step_flops(*model, p.seqlen, fo).total(), stats.time_ms.median);
  }
  const auto dt = dtype_of(run);
  if (gpu && dt) t.mfu = gpu->fraction_of_peak(t.tflops, *dt);
  return t;
}

namespace {

SideFigures side(const RunLog& run, const RunPoint* p, const Accelerator* gpu,
                 const std::optional<ModelShape>& model, const CompareOptions& opt,
                 std::optional<double> price) {
  SideFigures s;
  if (!p) return s;
  if (p->status == PointStatus::oom) {
    s.status = "oom";
    return s;
  }
  s.status = "ok";
  const PointStats st = point_stats(run, *p);
  s.steady_steps = st.steady_steps;
  s.step_time = st.time_ms;
  s.step_ms = st.time_ms.median;
  s.peak_gib = st.peak_mem_gib;
  s.expert_tokens = p->expert_tokens;
  const PointThroughput t = point_throughput(run, *p, st, model, gpu);
  s.tflops = t.tflops, s.mfu = t.mfu;
  const double tps = tokens_per_gpu_second(run.batch, p->seqlen, st.time_ms.median);
  if (price) {
    s.usd_per_mtok = usd_per_million_tokens(*price, tps);
    s.usd_per_step = usd_per_step(*price, st.time_ms.median);
  }
  if (opt.tokens) s.hours_to_train = hours_to_train(*opt.tokens, opt.gpus, tps);
  if (const std::optional<double> joules = p->steps.joules_per_step()) {
    s.tokens_per_joule = tokens_per_joule(run.batch, p->seqlen, *joules);
    s.energy_source = p->steps.energy_source();
    if (opt.power_usd_per_kwh) s.energy_usd_per_mtok = energy_usd_per_million_tokens(*s.tokens_per_joule, *opt.power_usd_per_kwh, opt.pue);
  }
  return s;
}

// What a key of our step's arithmetic a run does not say was (records/workload_keys.hpp's
// our_key_default: untiled, unchunked; master weights have none); nullopt for any other key.
std::optional<std::string> our_step_default(const std::string& key) {
  const bool step = std::find(kOurStepKeys.begin(), kOurStepKeys.end(), key) != kOurStepKeys.end();
  const char* said = step ? our_key_default(key) : nullptr;
  return said ? std::optional<std::string>(said) : std::nullopt;
}

// Two inputs of one measurement (a stored run and the file it came from, a copy of a suite's
// folder): the same GPU, workload and configuration and, at every length, the same steady steps
// timed alike in the same order. Separate runs never time every step alike.
bool same_measurement(const RunLog& a, const RunLog& b) {
  if (a.gpu != b.gpu || a.model != b.model || a.layers != b.layers || a.batch != b.batch || a.config != b.config ||
      a.points.size() != b.points.size()) {
    return false;
  }
  bool timed = false;
  for (size_t i = 0; i < a.points.size(); ++i) {
    const RunPoint& p = a.points[i];
    const RunPoint& q = b.points[i];
    const auto& x = p.steps.steady();
    const auto& y = q.steps.steady();
    if (p.seqlen != q.seqlen || x.size() != y.size()) return false;
    for (size_t j = 0; j < x.size(); ++j) {
      if (x[j].exec_time_ms != y[j].exec_time_ms) return false;
    }
    timed = timed || !x.empty();
  }
  return timed;
}

}  // namespace

std::vector<std::string> workload_differences(const RunLog& o, const RunLog& n) {
  std::vector<std::string> problems;
  if (o.model && n.model && *o.model != *n.model) {
    problems.push_back(fmt::format("different models: {} vs {}", *o.model, *n.model));
  }
  // A depth that is the model's every layer (our records' config_layers) is all of it, as a log
  // that names no depth.
  const auto depth = [](const RunLog& r) -> std::optional<int64_t> {
    const auto all = r.config.find("config_layers");
    return r.layers && all != r.config.end() && all->second == std::to_string(*r.layers) ? std::nullopt : r.layers;
  };
  if (depth(o) != depth(n)) {
    problems.push_back(fmt::format("different depth: {} vs {} layers", depth(o) ? std::to_string(*depth(o)) : "all",
                                   depth(n) ? std::to_string(*depth(n)) : "all"));
  }
  if (o.batch != n.batch) problems.push_back(fmt::format("different batch sizes: {} vs {}", o.batch, n.batch));
  if (o.dtype != n.dtype) problems.push_back(fmt::format("different dtypes: {} vs {}", o.dtype, n.dtype));
  // What changes the work of a GPU's step, not the software doing it: the GPUs sharing the job
  // (benchmark.py's world_size), recomputing the layers (its gc, our checkpointing), sharding the
  // model's state (its zero, our zero_stage) and moving work or memory to the host (its
  // offload_optim, our offload_optimizer and offload_checkpoints): a speedup across any of them is
  // the lever's as much as the GPU's.
  // A key one run of a format leaves out is that format's default (no recompute, no sharding,
  // one GPU). What a checkpointed step keeps has no default: compared only where both runs say it.
  std::vector<std::string> levers;
  for (const auto& list : {std::span<const char* const>(kOurLeverKeys), std::span<const char* const>(kOurFormerLeverKeys),
                           std::span<const char* const>(kBenchmarkPyLeverKeys)}) {
    for (const char* key : list) {
      if (std::find(levers.begin(), levers.end(), key) == levers.end()) levers.emplace_back(key);
    }
  }
  const auto lever_default = [](const std::string& key) -> std::optional<std::string> {
    if (key == "checkpointing_kept") return std::nullopt;
    return key == "world_size" ? "1" : "0";
  };
  for (const std::string& d : config_differences(o, n, levers, lever_default)) problems.push_back("different " + d);
  // Between our records and benchmark.py's log the same levers go by other keys: compared as one,
  // each format's default where it names none.
  if (o.format != n.format) {
    struct Lever {
      const char* what;
      std::vector<const char*> keys;  // ours, then benchmark.py's
    };
    const std::vector<Lever> both = {{"ZeRO stage", {"zero_stage", "zero"}},
                                     {"checkpointing", {"activation_checkpointing", "checkpointing", "gc"}},
                                     {"offloaded optimizer", {"offload_optimizer", "offload_optim"}}};
    const auto value = [](const RunLog& r, const Lever& l) {
      for (const char* k : l.keys) {
        if (const auto it = r.config.find(k); it != r.config.end()) {
          return it->second == "true" ? std::string("1") : it->second == "false" ? std::string("0") : it->second;
        }
      }
      return std::string("0");
    };
    for (const Lever& l : both) {
      // A key both name was compared above.
      if (std::any_of(l.keys.begin(), l.keys.end(), [&](const char* k) { return o.config.count(k) && n.config.count(k); })) {
        continue;
      }
      const std::string a = value(o, l), b = value(n, l);
      if (a != b) problems.push_back(fmt::format("different {}: {} vs {}", l.what, a, b));
    }
  }
  // The model's shape where both runs give it: a model of the same name and another shape is another model.
  const std::vector<std::string> shape(kOurModelShapeKeys.begin(), kOurModelShapeKeys.end());
  const auto no_default = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  for (const std::string& d : config_differences(o, n, shape, no_default)) problems.push_back("different model shape: " + d);
  // The step's arithmetic in our records (fp32 master weights or pure bf16, the loss's chunks, the
  // MLP's tiles): a change of any is the software's, not the GPU's.
  const std::vector<std::string> step(kOurStepKeys.begin(), kOurStepKeys.end());
  for (const std::string& d : config_differences(o, n, step, our_step_default)) problems.push_back("different " + d);
  return problems;
}

std::vector<std::string> config_differences(const RunLog& o, const RunLog& n, const std::vector<std::string>& keys,
                                            const std::function<std::optional<std::string>(const std::string&)>& default_of) {
  // Between formats a key is only compared where both name it.
  const auto value = [&](const RunLog& r, const std::string& key) -> std::optional<std::string> {
    const auto it = r.config.find(key);
    if (it != r.config.end()) return it->second == "true" ? "1" : it->second == "false" ? "0" : it->second;
    if (o.format != n.format) return std::nullopt;
    return default_of(key);
  };
  std::vector<std::string> out;
  for (const std::string& key : keys) {
    const auto a = value(o, key), b = value(n, key);
    if (a && b && *a != *b) {
      const auto said = [&](const RunLog& r, const std::string& v) { return r.config.count(key) ? v : v + " (not said)"; };
      out.push_back(fmt::format("{}: {} vs {}", key, said(o, *a), said(n, *b)));
    }
  }
  return out;
}

RunStepFlops run_step_flops(const RunLog& run, const std::optional<ModelShape>& model) {
  if (!model) return {};
  return [model = *model, batch = run.batch](int64_t seqlen) -> std::optional<double> {
    FlopOptions fo;
    fo.batch = batch;
    return step_flops(model, seqlen, fo).total();
  };
}

void refuse_impossible_run(const RunLog& run, const Catalog& catalog, const std::filesystem::path& models_dir) {
  std::vector<std::string> warnings;  // a model it cannot name leaves the FLOP checks out; said where the model is used
  refuse_impossible_run(run, catalog.try_find(run.gpu), run_model(run, models_dir, warnings));
}

void refuse_impossible_run(const RunLog& run, const Accelerator* gpu, const std::optional<ModelShape>& model) {
  refuse_impossible_points(run, gpu, run_step_flops(run, model));
  if (model) refuse_expert_tokens_not_of(run, *model);
}

std::optional<ModelShape> run_model(const RunLog& run, const std::filesystem::path& models_dir,
                                    std::vector<std::string>& warnings) {
  if (!run.model) {
    warnings.push_back(fmt::format("{}: the log names no model: attention share unknown", run.path));
    return std::nullopt;
  }
  ModelShape m;
  try {
    m = load_model(*run.model, models_dir);
  } catch (const std::exception& e) {
    warnings.push_back(fmt::format("{}: model {}: {}", run.path, *run.model, e.what()));
    return std::nullopt;
  }
  // Our context records give the shape they ran beside the model's name: where they disagree, the
  // name is not the model that ran, and its FLOPs would be another model's.
  for (const auto& [key, value] : {std::pair{"hidden", m.hidden}, std::pair{"intermediate", m.intermediate},
                                   std::pair{"heads", m.heads}, std::pair{"kv_heads", m.kv_heads},
                                   std::pair{"head_dim", m.head_dim}, std::pair{"vocab", m.vocab},
                                   std::pair{"config_layers", m.layers}}) {
    const auto said = run.config.find(key);
    if (said != run.config.end() && said->second != std::to_string(value)) {
      throw WorkError(fmt::format("{}: its context record says {} {}, {}'s is {}: the records name another model than "
                                  "the one that ran", run.path, key, printable(said->second), printable(*run.model), value));
    }
  }
  return run.layers ? with_layers(std::move(m), *run.layers) : m;
}

void set_catalog_ratios(Comparison& c) {
  c.peak_ratio.reset(), c.mamf_ratio.reset(), c.bandwidth_ratio.reset();
  if (!c.old_gpu || !c.new_gpu) return;
  const SpecComparison sc = compare_specs(*c.old_gpu, *c.new_gpu);
  if (auto dt = parse_dtype(c.old_run.dtype)) c.peak_ratio = sc.ratios.peak.at(*dt);
  c.mamf_ratio = c.old_run.dtype == "fp8" ? sc.ratios.mamf_fp8 : sc.ratios.mamf_bf16;
  c.bandwidth_ratio = sc.ratios.bandwidth;
}

Comparison compare_runs(RunLog old_run, RunLog new_run, const Catalog& catalog,
                        const std::filesystem::path& models_dir, const CompareOptions& opt) {
  for (const auto* p : {&opt.price_old, &opt.price_new}) {
    if (*p && !(**p > 0)) throw UsageError(fmt::format("prices must be positive USD per GPU-hour, got {}", **p));
  }
  if (opt.price_old.has_value() != opt.price_new.has_value()) {
    throw UsageError("give both --price-old and --price-new, or neither");
  }
  if (opt.tokens && !(*opt.tokens > 0)) throw UsageError("--tokens must be positive");
  if (opt.gpus <= 0) throw UsageError("--train-gpus must be positive");
  if (opt.power_usd_per_kwh && !(*opt.power_usd_per_kwh > 0)) throw UsageError("--power-price must be positive USD per kWh");
  if (!(opt.pue >= 1)) throw UsageError(fmt::format("--pue {}: a facility's power over its IT equipment's is 1 or more", opt.pue));

  Comparison c;
  c.power_usd_per_kwh = opt.power_usd_per_kwh, c.pue = opt.pue;
  c.old_run = std::move(old_run);
  c.new_run = std::move(new_run);
  for (const RunLog* r : {&c.old_run, &c.new_run}) {
    const std::string name = printable(r->path);  // as LineSource::where writes it
    for (const std::string& w : r->warnings) {
      c.warnings.push_back(w.rfind(name, 0) == 0 ? w : fmt::format("{}: {}", name, w));
    }
  }
  if (!opt.old_run_beside_itself && same_measurement(c.old_run, c.new_run)) {
    throw UsageError(fmt::format("{} and {} are the same measurement (every step timed alike): compared with itself it "
                                 "says nothing of a second GPU; give the other GPU's run", printable(c.old_run.path),
                                 printable(c.new_run.path)));
  }
  const std::vector<std::string> problems = workload_differences(c.old_run, c.new_run);
  if (!problems.empty()) {
    if (!opt.force) {
      throw UsageError(fmt::format("{} and {} are not the same workload ({}); --force compares them anyway",
                                   c.old_run.path, c.new_run.path, fmt::join(problems, "; ")));
    }
    for (const auto& p : problems) c.warnings.push_back("forced: " + p);
  }
  c.old_gpu = catalog.try_find(c.old_run.gpu);
  c.new_gpu = catalog.try_find(c.new_run.gpu);
  for (const auto& [r, g] : {std::pair{&c.old_run, c.old_gpu}, std::pair{&c.new_run, c.new_gpu}}) {
    if (g) continue;
    const std::optional<std::string> unknown = unknown_gpu_warning(r->gpu, catalog, r->path);
    c.warnings.push_back(unknown ? *unknown + "; its MFU and hardware ratios are N/A"
                                 : fmt::format("{}: names no GPU: its MFU and hardware ratios are N/A", r->path));
  }
  c.model = run_model(c.old_run, models_dir, c.warnings);
  refuse_impossible_run(c.old_run, c.old_gpu, c.model);
  refuse_impossible_run(c.new_run, catalog, models_dir);
  set_catalog_ratios(c);
  if (opt.price_old) c.break_even = break_even_speedup(*opt.price_old, *opt.price_new);

  // Stack check: every software component and every configuration key of either run.
  std::set<std::string> keys;
  for (const auto& [k, v] : c.old_run.software) keys.insert(k);
  for (const auto& [k, v] : c.new_run.software) keys.insert(k);
  for (const std::string& k : keys) {
    const auto o = c.old_run.software.find(k), n = c.new_run.software.find(k);
    const std::string ov = o == c.old_run.software.end() ? "absent" : o->second;
    const std::string nv = n == c.new_run.software.end() ? "absent" : n->second;
    if (ov != nv) c.stack.push_back({k, ov, nv, intended_difference(k)});
  }
  std::set<std::string> cfg_keys;
  for (const auto& [k, v] : c.old_run.config) cfg_keys.insert(k);
  for (const auto& [k, v] : c.new_run.config) cfg_keys.insert(k);
  // A key one of our runs leaves out is its default where it has one (a tile of 0 is no tile).
  const bool ours = c.old_run.format == "upgradebench" && c.new_run.format == "upgradebench";
  for (const std::string& k : cfg_keys) {
    if (k == "seqlen" || k == "seqlens") continue;  // the lengths a run measured are its points, not its stack
    if (k == "batch" || k == "batch_size") continue;  // the workload's, said (and forced) above
    const auto o = c.old_run.config.find(k), n = c.new_run.config.find(k);
    const std::string absent = ours ? our_step_default(k).value_or("absent") : "absent";
    const std::string ov = o == c.old_run.config.end() ? absent : o->second;
    const std::string nv = n == c.new_run.config.end() ? absent : n->second;
    if (ov != nv) c.stack.push_back({"config " + k, ov, nv, intended_difference(k)});
  }
  for (const StackDifference& d : c.stack) {
    if (!d.intended) c.stack_mismatch = true;
    c.warnings.push_back(fmt::format("{}{} differs: {} (old) vs {} (new)", d.intended ? "intended: " : "STACK: ",
                                     d.key, d.old_value, d.new_value));
  }
  if (opt.strict && c.stack_mismatch) {
    std::vector<std::string> names;
    for (const auto& d : c.stack) {
      if (!d.intended) names.push_back(d.key);
    }
    throw WorkError(fmt::format("--strict: the runs differ in {}: compare on the same software stack",
                                fmt::join(names, ", ")));
  }

  // Steps of other batches (forced) carry other numbers of tokens: speedup and wall clock are then
  // per token.
  const double tokens_per_step_ratio = static_cast<double>(c.new_run.batch) / static_cast<double>(c.old_run.batch);
  if (tokens_per_step_ratio != 1) {
    for (std::string& w : c.warnings) {
      if (w.rfind("forced: different batch sizes", 0) == 0) w += ": speedup and wall clock are per token";
    }
  }
  std::set<int64_t> seqlens;
  for (const RunPoint& p : c.old_run.points) seqlens.insert(p.seqlen);
  for (const RunPoint& p : c.new_run.points) seqlens.insert(p.seqlen);
  for (int64_t s : seqlens) {
    CompareRow row;
    row.seqlen = s;
    const RunPoint* op = c.old_run.point(s);
    const RunPoint* np = c.new_run.point(s);
    row.old_side = side(c.old_run, op, c.old_gpu, c.model, opt, opt.price_old);
    row.new_side = side(c.new_run, np, c.new_gpu, c.model, opt, opt.price_new);
    if (c.model) {
      FlopOptions fo;
      fo.batch = c.old_run.batch;
      row.attention_share = step_flops(*c.model, s, fo).attention_share();
    }
    if (row.old_side.status == "ok" && row.new_side.status == "ok") {
      row.speedup = speedup_of(point_stats(c.old_run, *op).time_ms, point_stats(c.new_run, *np).time_ms);
      row.wall_clock_ratio = *row.new_side.step_ms / *row.old_side.step_ms;
      if (tokens_per_step_ratio != 1) {  // per token, as the cost and the energy are
        const Verdict v = row.speedup->verdict;
        row.speedup = speedup_in(row.speedup->ratio * tokens_per_step_ratio, row.speedup->low * tokens_per_step_ratio,
                                 row.speedup->high * tokens_per_step_ratio);
        if (v == Verdict::few_samples) row.speedup->verdict = v;
        *row.wall_clock_ratio /= tokens_per_step_ratio;
      }
      if (row.old_side.usd_per_mtok) row.cost_ratio = *row.new_side.usd_per_mtok / *row.old_side.usd_per_mtok;
      if (row.old_side.tokens_per_joule && row.new_side.tokens_per_joule) {
        row.energy_ratio = *row.new_side.tokens_per_joule / *row.old_side.tokens_per_joule;
      }
    } else if (row.old_side.status == "oom" && row.new_side.status == "ok") {
      row.note = "old cannot run this";
    } else if (row.old_side.status == "ok" && row.new_side.status == "oom") {
      row.note = "new cannot run this";
    } else if (row.old_side.status == "oom" && row.new_side.status == "oom") {
      row.note = "neither can run this";
    } else {
      row.note = row.old_side.status == "absent" ? "not measured on old" : "not measured on new";
    }
    c.rows.push_back(std::move(row));
  }
  // Electricity prices the energy per token: with no power recorded on either side the option
  // would change nothing, said nowhere.
  if (opt.power_usd_per_kwh && std::none_of(c.rows.begin(), c.rows.end(), [](const CompareRow& r) {
        return r.old_side.tokens_per_joule || r.new_side.tokens_per_joule;
      })) {
    throw UsageError(fmt::format("--power-price prices the energy per token, and neither {} nor {} recorded its GPU's "
                                 "power (our records carry it from the driver's energy counter; benchmark.py's logs do "
                                 "not)", c.old_run.path, c.new_run.path));
  }
  return c;
}

}  // namespace ub

namespace ub {

std::vector<std::string> measured_conclusions(const Comparison& c) {
  std::vector<std::string> out;
  for (const CompareRow& r : c.rows) {
    if (r.speedup) {
      std::string line = fmt::format("seqlen {}: {} {:.2f}x (interval {:.2f}-{:.2f})", r.seqlen,
                                     to_string(r.speedup->verdict), r.speedup->ratio, r.speedup->low,
                                     r.speedup->high);
      if (c.break_even && r.speedup->verdict == Verdict::few_samples) {
        // A range of a few steps is no interval: no cost verdict stands on it.
        line += fmt::format(", break-even {:.2f}x: too few steps for a 95% interval, no cost verdict", *c.break_even);
      } else if (c.break_even) {
        line += r.speedup->low > *c.break_even    ? fmt::format(", above break-even {:.2f}x: cheaper per token", *c.break_even)
                : r.speedup->high < *c.break_even ? fmt::format(", below break-even {:.2f}x: costlier per token", *c.break_even)
                                                  : fmt::format(", at break-even {:.2f}x within the noise", *c.break_even);
      }
      line += fmt::format("; the same work takes {:.0f}% of the time.", *r.wall_clock_ratio * 100);
      out.push_back(line);
    } else if (r.note == "old cannot run this") {
      out.push_back(fmt::format("seqlen {}: only the new GPU runs it (the old one ran out of memory): at this "
                                "length the comparison is not speed but capability, unless more "
                                "parallelism on the old GPU fits it.", r.seqlen));
    } else if (r.note == "new cannot run this") {
      out.push_back(fmt::format("seqlen {}: only the old GPU runs it.", r.seqlen));
    }
  }
  return out;
}

void refuse_no_common_length(const Comparison& c) {
  if (c.rows.empty() || std::any_of(c.rows.begin(), c.rows.end(), [](const CompareRow& r) {
        return r.old_side.status != "absent" && r.new_side.status != "absent";
      })) {
    return;
  }
  const auto lengths = [&](bool old_side) {
    std::vector<std::string> out;
    for (const CompareRow& r : c.rows) {
      if ((old_side ? r.old_side : r.new_side).status != "absent") out.push_back(std::to_string(r.seqlen));
    }
    return out.empty() ? std::string("none") : fmt::format("{}", fmt::join(out, ", "));
  };
  throw UsageError(fmt::format("{} and {} share no length (old: {}; new: {}): nothing to compare; measure one length "
                               "on both", printable(c.old_run.path), printable(c.new_run.path), lengths(true),
                               lengths(false)));
}

}  // namespace ub
