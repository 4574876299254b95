// Carrying a step to another length or depth; see projection.hpp.
#include "analysis/predict/projection.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "facts/flops.hpp"
#include "base/units.hpp"

namespace ub {

StepInput project_to_seqlen(const StepInput& in, int64_t seqlen, const ModelShape& model,
                            const MeasuredRates& measured) {
  if (!in.seqlen) throw UsageError(fmt::format("{}: its sequence length is not known, so it cannot be carried to "
                                               "another one", in.path));
  FlopOptions fo;
  fo.batch = in.batch;
  const StepFlops a = step_flops(model, *in.seqlen, fo), b = step_flops(model, seqlen, fo);
  const double tokens = static_cast<double>(seqlen) / static_cast<double>(*in.seqlen);
  const auto ta = measured.attention_at(*in.seqlen), tb = measured.attention_at(seqlen);
  const double attention_speed = ta && tb ? *ta / *tb : 1.0;  // time per FLOP at b over a
  StepInput out = in;
  out.seqlen = seqlen;
  out.carried_from = in.carried_from ? in.carried_from : in.seqlen;
  out.step_ms = 0;
  for (StepInput::Bucket& x : out.buckets) {
    double growth = 1;
    switch (x.kind) {
      case WorkKind::matmul: growth = b.dense / a.dense; break;
      case WorkKind::attention: growth = b.attention / a.attention * attention_speed; break;
      case WorkKind::memory: growth = x.name == "optimizer" ? 1.0 : tokens; break;
      case WorkKind::dense_mixed:
      case WorkKind::unknown: growth = b.dense / a.dense; break;
      case WorkKind::communication:
      case WorkKind::unexplained:
      case WorkKind::unscaled: growth = 1; break;
    }
    x.ms *= growth;
    if (x.tflop) *x.tflop *= x.kind == WorkKind::attention ? b.attention / a.attention : growth;
    out.step_ms += x.ms;
  }
  if (in.step_tflop) out.step_tflop = to_tflop(b.total());
  out.peak_memory_gib.reset();  // memory does not carry over: memfit's line does that
  out.from = fmt::format("{}, carried from {} to {} tokens by the model's FLOPs{}", in.from, *in.seqlen, seqlen,
                         ta && tb ? " and the old GPU's attention runs at both lengths" : "");
  return out;
}

StepInput project_to_layers(const StepInput& in, int64_t layers, const ModelShape& model) {
  if (!in.layers) {
    throw UsageError(fmt::format("{}: the depth it measured is not known (its records do not say it): give --layers",
                                 in.path));
  }
  if (!in.seqlen) throw UsageError(fmt::format("{}: its sequence length is not known, so its FLOPs are not", in.path));
  const ModelShape a = with_layers(model, *in.layers), b = with_layers(model, layers);
  FlopOptions fo;
  fo.batch = in.batch;
  const StepFlops fa = step_flops(a, *in.seqlen, fo), fb = step_flops(b, *in.seqlen, fo);
  const double depth = static_cast<double>(layers) / static_cast<double>(*in.layers);
  const double parameters = static_cast<double>(b.parameter_count()) / static_cast<double>(a.parameter_count());
  StepInput out = in;
  out.layers = layers;
  out.layers_carried_from = in.layers_carried_from ? in.layers_carried_from : in.layers;
  out.step_ms = 0;
  for (StepInput::Bucket& x : out.buckets) {
    double growth = 1;
    switch (x.kind) {
      case WorkKind::matmul:
      case WorkKind::dense_mixed:
      case WorkKind::unknown: growth = fb.dense / fa.dense; break;
      case WorkKind::attention: growth = fb.attention / fa.attention; break;
      case WorkKind::memory: growth = x.name == "optimizer" ? parameters : x.name == "loss" ? 1.0 : depth; break;
      case WorkKind::communication: growth = parameters; break;
      case WorkKind::unexplained:
      case WorkKind::unscaled: growth = 1; break;
    }
    x.ms *= growth;
    if (x.tflop) *x.tflop *= growth;
    out.step_ms += x.ms;
  }
  if (in.step_tflop) out.step_tflop = to_tflop(fb.total());
  out.peak_memory_gib.reset();  // weights, gradients and optimizer state grow too: memfit, not this
  out.from = fmt::format("{}, carried from {} to {} layers by the model's FLOPs and parameters", in.from, *in.layers,
                         layers);
  return out;
}

}  // namespace ub
