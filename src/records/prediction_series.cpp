// One series of predictions; see prediction_series.hpp.
#include "records/prediction_series.hpp"

#include <fmt/format.h>

#include "base/text.hpp"

namespace ub {

std::optional<std::string> PredictionSeries::add(const Fields& f) {
  const std::string pair = fmt::format("{} -> {}", printable(f.string_or("old_gpu", "?")), printable(f.string_or("new_gpu", "?")));
  const auto count = [&](const char* key) {
    const auto v = f.optional_count(key);
    return v ? std::to_string(*v) : std::string("not said");
  };
  const auto w = f.optional_object("workload");
  const std::string workload =
      fmt::format("model {}, layers {}, batch {}, step {}", printable(f.string_or("model", "not said")), count("layers"),
                  count("batch"), w ? printable(w->raw().dump()) : std::string("not said"));
  if (!pair_) {
    pair_ = pair, workload_ = workload;
  } else if (pair != *pair_) {
    return fmt::format("a prediction of {} after ones of {}: one pair of GPUs per file", pair, *pair_);
  } else if (workload != *workload_) {
    return fmt::format("a prediction of {} after ones of {}: one workload per file", workload, *workload_);
  }
  if (const auto seqlen = f.optional_count("seqlen")) {
    if (lengths_[*seqlen]++ > 0) return fmt::format("a second prediction at {} tokens: one per length", *seqlen);
  }
  return std::nullopt;
}

}  // namespace ub
