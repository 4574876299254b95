// Sweep bookkeeping; see sweep_plan.hpp.
#include "analysis/sweep_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "records/record_file.hpp"
#include "records/train_records.hpp"
#include "records/workload_keys.hpp"

namespace ub {

std::map<int64_t, PointOutcome> sweep_outcomes(const std::filesystem::path& records, int steps,
                                               std::vector<std::string>* warnings) {
  if (!std::filesystem::exists(records)) return {};
  return sweep_outcomes(LineSource::file(records), steps, warnings);
}

std::map<int64_t, PointOutcome> sweep_outcomes(const LineSource& records, int steps, std::vector<std::string>* warnings) {
  std::map<int64_t, PointOutcome> out;
  std::map<int64_t, int> steady;  // steady steps seen per length
  std::vector<std::string> skipped;  // damaged lines: the points they held are run again
  for_each_record(records, [&](const RecordLine& r) {
    const bool training = r.type == "train_step" || r.type == "train_oom" || r.type == "train_error";
    if (training && (!r.json.contains("seqlen") || !r.json.at("seqlen").is_number_integer())) {
      skipped.push_back(fmt::format("{}: a {} record without a whole seqlen, skipped: read as if it were not in the file",
                                    r.where, r.type));
      return;
    }
    const Fields f(r.json, r.where);
    if (!f.has("seqlen") || !r.json.at("seqlen").is_number_integer()) return;
    const int64_t s = f.count("seqlen");
    auto mark = [&](PointOutcome o) {
      auto it = out.find(s);
      // measured wins over anything; oom over failed
      if (it == out.end() || static_cast<int>(o) < static_cast<int>(it->second)) out[s] = o;
    };
    if (r.type == "train_step") {
      const bool counts = !read_train_step(f, 0).warmup && ++steady[s] >= steps;
      mark(counts ? PointOutcome::measured : PointOutcome::failed);
    } else if (r.type == "train_oom" || r.type == "train_error") {
      mark(read_train_failure(f).oom ? PointOutcome::oom : PointOutcome::failed);
    }
  }, skipped);
  if (warnings) warnings->insert(warnings->end(), skipped.begin(), skipped.end());
  return out;
}

void MaxFitSearch::fits(int64_t seqlen) {
  if (!fit_ || seqlen > *fit_) fit_ = seqlen;
}

void MaxFitSearch::does_not_fit(int64_t seqlen) {
  if (!fail_ || seqlen < *fail_) fail_ = seqlen;
}

std::optional<int64_t> MaxFitSearch::next() const {
  auto round = [&](int64_t v) { return std::max<int64_t>(granularity_, v / granularity_ * granularity_); };
  auto inside = [&](int64_t v) { return (!fit_ || v > *fit_) && (!fail_ || v < *fail_) && v <= ceiling_; };
  // A step that lands past the ceiling tries the ceiling instead (once: then it is a fit or a failure).
  auto capped = [&](int64_t v) -> std::optional<int64_t> {
    if (v <= ceiling_) return v;
    return inside(round(ceiling_)) ? std::optional<int64_t>(round(ceiling_)) : std::nullopt;
  };
  // The prediction, until it is on one side; a prediction past the ceiling tries the ceiling.
  if (aim_ && inside(round(std::min(*aim_, ceiling_)))) return round(std::min(*aim_, ceiling_));
  if (fit_ && fail_) {
    if (*fail_ - *fit_ <= granularity_) return std::nullopt;
    int64_t mid = round(*fit_ + (*fail_ - *fit_) / 2);
    if (aim_ && *aim_ <= *fit_) mid = std::min(mid, round(*fit_ + std::max(granularity_, *fit_ / 10)));
    if (aim_ && *aim_ >= *fail_) mid = std::max(mid, round(*fail_ - std::max(granularity_, *fail_ / 10)));
    if (mid <= *fit_ || mid >= *fail_) return std::nullopt;
    return capped(mid);
  }
  if (fit_) {
    const int64_t up = aim_ ? round(*fit_ + std::max(granularity_, *fit_ / 10)) : round(*fit_ * 2);
    return up <= *fit_ ? std::nullopt : capped(up);
  }
  if (fail_) {
    const int64_t down = aim_ ? round(*fail_ - std::max(granularity_, *fail_ / 10)) : round(*fail_ / 2);
    return down >= *fail_ ? std::nullopt : capped(down);
  }
  return std::nullopt;
}

}  // namespace ub

namespace ub {

std::string resume_mismatch(const std::filesystem::path& records, const nlohmann::json& expected) {
  if (!std::filesystem::exists(records)) return "";
  return resume_mismatch(LineSource::file(records), expected);
}

std::string resume_mismatch(const LineSource& records, const nlohmann::json& expected) {
  std::string found;
  std::vector<std::string> warnings;
  for_each_record(records, [&](const RecordLine& r) {
    if (r.type != "context" || !found.empty() || !r.json.contains("config") || !r.json["config"].is_object()) return;
    const nlohmann::json& c = r.json["config"];
    // A key the file's context leaves out is what it ran without saying (our_key_default).
    for (const auto& [key, want] : expected.items()) {
      const char* absent = our_key_default(key);
      if (!c.contains(key) && !absent) continue;
      const nlohmann::json there = c.contains(key) ? c[key] : nlohmann::json::parse(absent);
      if (there != want) {
        found = fmt::format("{}: {} is {} there{}, {} here", r.where, key, there.dump(), c.contains(key) ? "" : " (not said)",
                            want.dump());
        return;
      }
    }
  }, warnings);
  return found;
}

}  // namespace ub
