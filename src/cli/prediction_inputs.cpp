// Reading the inputs of a prediction and predicting; see prediction_inputs.hpp.
#include "cli/prediction_inputs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "analysis/log_comparisons.hpp"
#include "analysis/predict/projection.hpp"
#include "analysis/predict/step_inputs.hpp"
#include "analysis/run_limits.hpp"
#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/arguments.hpp"
#include "facts/flops.hpp"
#include "records/provenance.hpp"
#include "records/readers/log_kind.hpp"
#include "base/units.hpp"
#include "records/readers/read_run.hpp"
#include "records/record_file.hpp"

namespace ub::cli {

namespace {

constexpr double kMaxCarry = 128;  // how far --seqlen carries a measured step, either way (checked to 80x)

// An attention run that timed another problem than the step's attention (other heads, KV heads or
// head size, or no causal mask): its ratio is not the step's. What the log does not say is not held.
void refuse_attention_not_of_step(const AttentionLog& l, const ModelShape& m) {
  const auto said = [&](std::initializer_list<const char*> keys) -> std::optional<std::string> {
    for (const char* k : keys) {
      if (const auto it = l.header.find(k); it != l.header.end()) return it->second;
    }
    return std::nullopt;
  };
  std::vector<std::string> differs;
  const auto check = [&](const char* what, std::initializer_list<const char*> keys, int64_t step) {
    if (const auto v = said(keys); v && *v != std::to_string(step)) {
      differs.push_back(fmt::format("{} {} vs {}", what, printable(*v), step));
    }
  };
  check("heads", {"nheads", "heads"}, m.heads);
  check("KV heads", {"nheads_kv", "kv_heads"}, m.kv_heads);
  check("head size", {"head_dim"}, m.head_dim);
  if (const auto c = said({"causal"}); c && to_lower(*c) != "true" && *c != "1") differs.push_back("not causal");
  if (!differs.empty()) {
    throw UsageError(fmt::format("--measured {}: attention of another problem than the step's ({}: {}, the run's vs the "
                                 "model's): measure attention at the model's shape", printable(l.path), m.id,
                                 fmt::join(differs, ", ")));
  }
}

}  // namespace

PredictionRun run_predictions(Context& ctx, const PredictionRequest& o) {
  PredictionRun out;
  const Catalog& cat = ctx.catalog();
  const Accelerator& to = cat.find(o.to);
  std::optional<ModelShape> model, full_model;
  if (!o.model.empty()) model = ctx.model(o.model, o.layers), full_model = ctx.model(o.model, 0);
  // The model at the depth a step measured: its records' depth where they say it, else --layers.
  const auto model_of = [&](const StepInput& s) { return s.layers ? with_layers(*full_model, *s.layers) : *model; };
  // The model an input names (or implies), where --model gave none: said so.
  // `assumed`: the input does not say its model (a printout of bench_decompose.py), --model may give another.
  const auto adopt = [&](const std::string& name, const std::string& path, const char* because, bool assumed = false) {
    try {
      model = ctx.model(name, o.layers), full_model = ctx.model(name, 0);
    } catch (const std::runtime_error& e) {  // a config path of the machine that measured, say
      throw UsageError(fmt::format("{}: its model {}: {}; give the model with --model", printable(path), printable(name),
                                   e.what()));
    }
    out.warnings.push_back(fmt::format("{}: the model is {}, {}{}", printable(path), name, because,
                                       assumed ? " (--model to give another)" : ""));
  };
  // An input that names the model it ran against a --model that names another: an error, never a
  // prediction of one model's step with another's shapes. A name this machine cannot resolve (a
  // config path of the machine that measured) is what --model is for.
  const auto refuse_other_model = [&](const std::string& ran, const std::string& path, const char* what) {
    if (o.model.empty()) return;
    std::optional<std::string> id;
    try {
      id = ctx.model(ran, 0).id;
    } catch (const std::runtime_error&) {
    }
    if (id && *id != full_model->id) {
      throw UsageError(fmt::format("{}: the {} ran {}, --model says {}: give the model it ran", printable(path), what,
                                   printable(ran), o.model));
    }
  };
  std::vector<std::string>& warnings = out.warnings;
  std::vector<StepInput> steps;
  for (const std::string& path : o.inputs) {
    const LineSource t = LineSource::file(path);
    const LogKind kind = detect_log_kind(t);
    // A training log with `train --breakdown`'s decompositions in it: those, not the FLOP split.
    const bool decomposed = kind == LogKind::training && has_record_type(t, "decomposition");
    if (kind == LogKind::decomposition || decomposed) {
      // bench_decompose.py runs one model, meta-llama/Llama-3.1-8B (its MODEL_ID): its printout need not say it.
      if (!model && !looks_like_records(t)) adopt(kPrintoutModel, path, "the one bench_decompose.py runs", true);
      if (kind == LogKind::decomposition) {
        const DecompositionLog log = read_decomposition_log(t);
        refuse_impossible_decomposition(log, cat);
        if (!looks_like_records(t)) {
          try {
            refuse_printout_not_of_model(log, *model, " (or give the --model and --layers it ran)");
          } catch (const WorkError& e) {
            // The model or its depth was the user's word, not the printout's: the option is what to change.
            if (o.model.empty() && o.layers <= 0) throw;
            std::vector<std::string> given;
            if (!o.model.empty()) given.push_back("--model " + o.model);
            if (o.layers > 0) given.push_back(fmt::format("--layers {}", o.layers));
            const std::string options = fmt::format("{}", fmt::join(given, " "));
            // A printout that is the script's own model at its full depth: the option alone is wrong.
            bool script_model = true;
            try {
              refuse_printout_not_of_model(log, ctx.model(kPrintoutModel, 0), "");
            } catch (const WorkError&) {
              script_model = false;
            }
            if (!script_model) throw UsageError(fmt::format("{}: {}", options, e.what()));
            throw UsageError(fmt::format("{}: {} is the work of {} at all its layers, the model bench_decompose.py runs, "
                                         "not the work {} names: leave {} out, or give the model and depth it ran",
                                         options, printable(path), kPrintoutModel, options, given.size() > 1 ? "them" : "it"));
          }
        }
      }
      for (StepInput& s : steps_from_decompositions(t)) {
        // Our records name the model they decomposed, as a training log's do; what they say of
        // its depth wins over an option that says otherwise only as an error.
        if (!model && s.model) adopt(*s.model, path, "as its records say");
        else if (s.model) refuse_other_model(*s.model, path, "decomposition");
        if (s.layers && o.layers > 0 && *s.layers != o.layers) {
          throw UsageError(fmt::format("{}: the decomposition ran {} layers, --layers says {}", path, *s.layers, o.layers));
        }
        steps.push_back(std::move(s));
      }
    } else if (kind == LogKind::training) {
      // What the log says it ran (model, layers, batch) wins over defaults; against an explicit
      // option it is an error, not a silent choice.
      const RunLog said = read_run_log(t);
      if (!model && said.model) {  // as compare reads it: benchmark.py's model_size, our records' config
        adopt(*said.model, path, "as the log says");
      } else if (said.model) {
        refuse_other_model(*said.model, path, "log");
      }
      if (said.layers && o.layers > 0 && *said.layers != o.layers) {
        throw UsageError(fmt::format("{}: the log ran {} layers, --layers says {}", path, *said.layers, o.layers));
      }
      const std::optional<ModelShape> step_model =
          !model ? std::nullopt : said.layers ? std::optional<ModelShape>(with_layers(*full_model, *said.layers)) : model;
      const int64_t batch = said.batch;
      const StepFlopsAt flops = [&](int64_t seqlen, bool recompute) -> std::optional<StepFlops> {
        if (!step_model) return std::nullopt;
        FlopOptions fo;
        fo.batch = batch;
        fo.recompute = recompute;
        return step_flops(*step_model, seqlen, fo);
      };
      const Accelerator* said_gpu = said.gpu.empty() ? nullptr : cat.try_find(said.gpu);
      try {
        refuse_impossible_points(said, said_gpu, [&](int64_t seqlen) -> std::optional<double> {
          const std::optional<StepFlops> f = flops(seqlen, false);
          return f ? std::optional<double>(f->total()) : std::nullopt;
        });
      } catch (const WorkError& e) {
        // The model's FLOPs came from --model or --layers where the log does not say them: the
        // option may be what is wrong, not the log.
        const bool from_options = (!said.model && !o.model.empty()) || (!said.layers && o.layers > 0);
        if (!from_options || std::string(e.what()).find("the model's FLOPs") == std::string::npos) throw;
        throw UsageError(fmt::format("{} (the model's FLOPs as --model {} --layers {} count them: if the log ran "
                                     "another depth or model, give that)", e.what(), o.model.empty() ? "(the log's)" : o.model,
                                     o.layers > 0 ? std::to_string(o.layers) : "(all)"));
      }
      if (step_model) refuse_expert_tokens_not_of(said, *step_model);
      const double peak = said_gpu && said_gpu->peak(Dtype::bf16).known() ? said_gpu->peak(Dtype::bf16).value : 0;
      for (StepInput& s : steps_from_training_log(said, read_provenance(t), flops, peak, warnings)) steps.push_back(std::move(s));
    } else {
      throw UsageError(fmt::format("{} is {}; give a decomposition (decompose records, bench_decompose.py's "
                                   "printout) or a training log (train / sweep records, benchmark.py's sweep log)",
                                   path, to_string(kind)));
    }
  }
  // A step that says its FLOPs and its length is checked against the model's work at that length:
  // an 8k step labelled 64k was predicted as a 64k one.
  if (model) {
    for (const StepInput& s : steps) {
      if (!s.seqlen || !(s.step_tflop || s.executed_tflop)) continue;
      refuse_step_not_of_model(s.path, s.executed_tflop ? *s.executed_tflop : *s.step_tflop, *s.seqlen, s.batch,
                               model_of(s), " (or give the --model and --layers it ran)",
                               s.executed_tflop ? StepWork::executed : StepWork::model);
    }
  }
  // The old GPU: what the inputs name (one GPU for all of them), which --from must agree with; --from
  // alone for inputs that do not name it.
  std::string old_name = o.from;
  for (const StepInput& s : steps) {
    if (s.old_gpu.empty()) continue;
    try {
      (void)cat.find(s.old_gpu);
    } catch (const UsageError& e) {  // which input named it
      throw UsageError(fmt::format("{}: the GPU it measured: {}", printable(s.path), e.what()));
    }
    if (!old_name.empty() && cat.find(old_name).id != cat.find(s.old_gpu).id) {
      throw UsageError(o.from.empty() ? fmt::format("the inputs measured different GPUs ({} and {}): one old GPU at a "
                                                    "time", old_name, s.old_gpu)
                                      : fmt::format("{} measured the {}, not the {} (--from)", s.path, s.old_gpu,
                                                    cat.find(o.from).id));
    }
    old_name = s.old_gpu;
  }
  if (old_name.empty()) throw UsageError("the inputs do not name their GPU: give --from GPU");
  const Accelerator& from = cat.find(old_name);
  // A peak past what the old GPU holds is no measurement (a printout's peak_mem=9999.0 decided
  // the memory question).
  for (const StepInput& s : steps) {
    if (s.peak_memory_gib) refuse_peak_past_memory(*s.peak_memory_gib, from, printable(s.path));
  }
  MeasuredRates from_rates, to_rates;
  std::vector<AttentionLog> from_attention, to_attention;
  std::vector<BandwidthLog> from_bandwidth, to_bandwidth;
  for (const std::string& path : o.measured) {
    const MeasuredFile m = read_measured(LineSource::file(path), cat);
    const Accelerator* g = m.gpu.empty() ? nullptr : cat.try_find(m.gpu);
    if (!g || (g->id != from.id && g->id != to.id)) {
      throw UsageError(fmt::format("--measured {}: measured {}, neither {} nor {}", path,
                                   m.gpu.empty() ? "an unnamed GPU" : m.gpu, from.id, to.id));
    }
    merge(g->id == from.id ? from_rates : to_rates, m.rates);
    if (m.attention) (g->id == from.id ? from_attention : to_attention).push_back(*m.attention);
    if (m.bandwidth) (g->id == from.id ? from_bandwidth : to_bandwidth).push_back(*m.bandwidth);
  }
  // Attention's ratio is of one problem on two GPUs: the pair is held to what `compare` holds it to,
  // and so are HBM copies (one kernel on both).
  for (const AttentionLog& a : from_attention) {
    for (const AttentionLog& b : to_attention) (void)compare_attention(a, b, cat);
  }
  for (const BandwidthLog& a : from_bandwidth) {
    for (const BandwidthLog& b : to_bandwidth) (void)compare_bandwidth(a, b, cat);
  }
  // ... and the attention timed is the step's: its model's heads, KV heads and head size, causal.
  if (model) {
    for (const auto* logs : {&from_attention, &to_attention}) {
      for (const AttentionLog& l : *logs) refuse_attention_not_of_step(l, *model);
    }
  }
  PredictOptions po;
  po.price_from = o.price_from, po.price_to = o.price_to;
  bool carried = false;  // a step taken to a length or depth it was not measured at
  if (!o.carry_from.empty() && o.seqlens.empty()) {
    throw UsageError("--carry-from picks the measured length that --seqlen carries from: give --seqlen too");
  }
  if (!o.seqlens.empty()) {
    // Each length from the measured step nearest to it (by the ratio of lengths).
    if (!model) throw UsageError("--seqlen carries a measured step to other lengths by the model's FLOPs: give --model");
    std::vector<StepInput> measured;
    const std::optional<int64_t> only =
        o.carry_from.empty() ? std::nullopt : std::optional<int64_t>(parse_size(o.carry_from, "--carry-from"));
    for (StepInput& s : steps) {
      if (s.seqlen && (!only || *s.seqlen == *only)) measured.push_back(std::move(s));
    }
    if (measured.empty()) {
      throw UsageError(only ? fmt::format("--carry-from {}: no input measured that length", *only)
                            : std::string("--seqlen: no input says its sequence length"));
    }
    steps.clear();
    const std::vector<int64_t> targets = parse_size_list(o.seqlens, "--seqlen");
    refuse_repeated(targets, "--seqlen");
    for (const int64_t target : targets) {
      const auto distance = [&](const StepInput& s) {
        return std::abs(std::log(static_cast<double>(*s.seqlen) / static_cast<double>(target)));
      };
      const StepInput& nearest = *std::min_element(measured.begin(), measured.end(), [&](const auto& x, const auto& y) {
        return distance(x) < distance(y);
      });
      // Carried further, the FLOPs say nothing of what changes with length (the kernels' shapes,
      // memory): a prediction from 8k at 1G tokens, or at 1 token, is no prediction.
      if (distance(nearest) > std::log(kMaxCarry)) {
        throw UsageError(fmt::format("--seqlen {}: {:.3g} times the nearest measured length ({}): a step is carried at "
                                     "most {:g}x either way; measure nearer to it", target,
                                     static_cast<double>(target) / static_cast<double>(*nearest.seqlen), *nearest.seqlen,
                                     kMaxCarry));
      }
      carried = carried || *nearest.seqlen != target;
      steps.push_back(*nearest.seqlen == target ? nearest
                                                : project_to_seqlen(nearest, target, model_of(nearest), from_rates));
    }
  }
  if (o.to_layers != 0) {
    if (!model) throw UsageError("--to-layers carries a measured step to another depth by the model's FLOPs: give --model");
    if (o.to_layers < 0) throw UsageError("--to-layers: must be positive");
    if (o.to_layers > full_model->config_layers) {
      throw UsageError(fmt::format("--to-layers {} is more than the {} layers of {}", o.to_layers,
                                   full_model->config_layers, full_model->id));
    }
    for (StepInput& s : steps) {
      if (s.layers && o.layers > 0 && *s.layers != o.layers) {
        throw UsageError(fmt::format("{} measured {} layers, not the {} of --layers", s.path, *s.layers, o.layers));
      }
      if (!s.layers) s.layers = model->layers;
      if (*s.layers != o.to_layers) s = project_to_layers(s, o.to_layers, *full_model), carried = true;
    }
  }
  // Predicting the GPU measured is carrying a step to another length or depth, checked against a
  // run of it; where nothing was carried, the "prediction" is the measurement relabelled.
  if (from.id == to.id && !carried) {
    throw UsageError(fmt::format("predict: --to {} is the GPU the inputs measured ({}): name the GPU you consider (--to "
                                 "the same GPU goes with --seqlen or --to-layers carrying a step to a length or depth "
                                 "it did not measure)", to.id, printable(old_name)));
  }
  po.catalog = &cat;
  for (StepInput& s : steps) {
    if (model) add_model(s, model_of(s));
    out.predictions.push_back(predict_step(s, from, to, from_rates, to_rates, po));
  }
  out.from = &from, out.to = &to;
  out.model = full_model;
  return out;
}

}  // namespace ub::cli
