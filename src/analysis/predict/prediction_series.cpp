// One series of predictions; see prediction_series.hpp.
#include "analysis/predict/prediction_series.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/compare.hpp"
#include "analysis/predict/prediction_record_check.hpp"
#include "base/text.hpp"

namespace ub {

RunLog prediction_workload(const Fields& f) {
  RunLog r;
  r.path = "prediction";
  r.format = f.string_or("format", "");
  if (f.has("model")) r.model = f.string("model");
  r.layers = f.optional_count("layers");
  if (const auto b = f.optional_count("batch")) r.batch = *b;
  if (const auto w = f.optional_object("workload")) {
    for (const auto& item : w->raw().items()) {
      if (item.value().is_string() && item.value().get<std::string>() != "null") {
        r.config[item.key()] = item.value().get<std::string>();
      }
    }
  }
  if (const auto d = r.config.find("dtype"); d != r.config.end()) r.dtype = d->second;
  return r;
}

std::optional<std::string> PredictionSeries::add(const Fields& f) {
  check_prediction_record(f);
  const std::string pair = fmt::format("{} -> {}", printable(f.string_or("old_gpu", "?")), printable(f.string_or("new_gpu", "?")));
  const RunLog workload = prediction_workload(f);
  if (!pair_) {
    pair_ = pair, workload_ = workload;
  } else if (pair != *pair_) {
    return fmt::format("a prediction of {} after ones of {}: one pair of GPUs per file", pair, *pair_);
  } else if (const auto differs = workload_differences(*workload_, workload); !differs.empty()) {
    return fmt::format("a prediction of another workload than the ones before it ({}; theirs, then this one's): one "
                       "workload per file", printable(fmt::format("{}", fmt::join(differs, "; "))));
  }
  if (const auto seqlen = f.optional_count("seqlen")) {
    if (lengths_[*seqlen]++ > 0) return fmt::format("a second prediction at {} tokens: one per length", *seqlen);
  }
  return std::nullopt;
}

}  // namespace ub
