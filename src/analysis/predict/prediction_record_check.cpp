// Checks of a prediction record; see prediction_record_check.hpp.
#include "analysis/predict/prediction_record_check.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>

#include "base/error.hpp"

namespace ub {

namespace {

// How far two figures the record says twice may part: they are rounded by nothing but doubles.
constexpr double kAgree = 1e-3;
// No GPU's dense peak comes near this: a TFLOPS over MFU beyond it is a damaged figure.
constexpr double kMaxPeakTflops = 1e5;

[[noreturn]] void refuse(const Fields& f, const char* field, const std::string& why) {
  throw WorkError(fmt::format("{}: \"{}\" {}: a prediction record edited or damaged (predict --out writes it whole)",
                              f.where(), field, why));
}

std::optional<double> positive_or_null(const Fields& f, const char* key) {
  const auto v = f.optional_number(key);
  if (v && !(std::isfinite(*v) && *v > 0)) refuse(f, key, fmt::format("is {}, where a positive number is meant", *v));
  return v;
}

// [low, high] around `point`, or null.
void check_interval(const Fields& f, const char* key, std::optional<double> point) {
  if (!f.has(key)) return;
  const nlohmann::json& v = f.raw().at(key);
  if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number()) {
    refuse(f, key, "is not [low, high]");
  }
  const double lo = v[0].get<double>(), hi = v[1].get<double>();
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo > 0 && lo <= hi)) {
    refuse(f, key, fmt::format("is [{}, {}], not a positive interval from low to high", lo, hi));
  }
  if (!point) refuse(f, key, "is given without its point");
  if (*point < lo * (1 - kAgree) || *point > hi * (1 + kAgree)) {
    refuse(f, key, fmt::format("is [{}, {}], which does not hold its point {}", lo, hi, *point));
  }
}

}  // namespace

void check_prediction_record(const Fields& f) {
  const nlohmann::json& j = f.raw();
  if (!(j.contains("predicted") && j["predicted"].is_boolean() && j["predicted"].get<bool>())) {
    refuse(f, "predicted", "is not true, in a prediction");
  }
  if (f.has("seqlen")) f.positive_count("seqlen");
  if (f.has("batch")) f.positive_count("batch");
  const double old_step = f.positive("old_step_ms");
  const auto step = positive_or_null(f, "step_ms"), speedup = positive_or_null(f, "speedup");
  if (step && speedup && std::abs(old_step / *step / *speedup - 1) > kAgree) {
    refuse(f, "speedup", fmt::format("is {}, where the old step over the predicted one is {}", *speedup, old_step / *step));
  }
  if (step.has_value() != speedup.has_value()) refuse(f, step ? "speedup" : "step_ms", "is missing beside the other");
  check_interval(f, "step_ms_interval", step);
  check_interval(f, "speedup_interval", speedup);
  const auto tflops = positive_or_null(f, "tflops"), mfu = positive_or_null(f, "mfu");
  if (mfu && *mfu > 1) refuse(f, "mfu", fmt::format("is {}, above the GPU's peak", *mfu));
  if (tflops && mfu && *tflops / *mfu > kMaxPeakTflops) {
    refuse(f, "tflops", fmt::format("is {} at an MFU of {}: a peak no GPU has", *tflops, *mfu));
  }
  positive_or_null(f, "break_even");
  for (const char* key : {"usd_per_mtoken_old", "usd_per_mtoken_new"}) {
    if (const auto v = f.optional_number(key); v && !(std::isfinite(*v) && *v >= 0)) {
      refuse(f, key, fmt::format("is {}, not a price", *v));
    }
  }
  if (f.has("fits") && !j["fits"].is_boolean()) refuse(f, "fits", "is not true or false");
  positive_or_null(f, "new_capacity_gib");
  positive_or_null(f, "old_peak_memory_gib");
  // The buckets add up to the predicted step.
  if (step) {
    if (!j.contains("buckets") || !j["buckets"].is_array() || j["buckets"].empty()) {
      refuse(f, "buckets", "are missing beside a predicted step");
    }
    double sum = 0;
    for (const nlohmann::json& b : j["buckets"]) {
      if (!b.is_object()) refuse(f, "buckets", "hold something other than a bucket");
      const Fields bucket(b, f.where());
      if (const auto ms = bucket.optional_number("ms")) {
        if (!(std::isfinite(*ms) && *ms >= 0)) refuse(f, "buckets", fmt::format("hold a time of {} ms", *ms));
        sum += *ms;
        const auto lo = bucket.optional_number("ms_low"), hi = bucket.optional_number("ms_high");
        if ((lo && !(*lo >= 0 && *lo <= *ms * (1 + kAgree))) || (hi && !(std::isfinite(*hi) && *hi >= *ms * (1 - kAgree)))) {
          refuse(f, "buckets", fmt::format("hold {} ms with an interval that does not hold it", *ms));
        }
      }
      if (b.contains("ratio") && b["ratio"].is_object()) {
        const Fields ratio(b["ratio"], f.where());
        for (const char* key : {"point", "low", "high"}) {
          if (const auto r = ratio.optional_number(key); r && !(std::isfinite(*r) && *r > 0)) {
            refuse(f, "buckets", fmt::format("hold a ratio {} of {}", key, *r));
          }
        }
      }
    }
    if (std::abs(sum / *step - 1) > kAgree) {
      refuse(f, "buckets", fmt::format("add up to {} ms, where the predicted step is {} ms", sum, *step));
    }
  }
}

}  // namespace ub
