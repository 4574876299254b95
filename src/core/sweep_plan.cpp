// Sweep bookkeeping; see sweep_plan.hpp.
#include "core/sweep_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/readers/text_lines.hpp"
#include "core/text.hpp"

namespace ub {

std::map<int64_t, PointOutcome> sweep_outcomes(const std::filesystem::path& records) {
  std::map<int64_t, PointOutcome> out;
  if (!std::filesystem::exists(records)) return out;
  const TextLines t = read_text_lines(records);
  for (size_t i = 0; i < t.lines.size(); ++i) {
    const std::string line = trim(t.lines[i]);
    if (line.empty()) continue;
    nlohmann::json r;
    try {
      r = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      if (t.is_last(i) && t.last_line_unterminated) continue;  // the point being written when stopped
      throw WorkError(fmt::format("{}: a record that is not valid JSON", t.where(i)));
    }
    if (!r.is_object() || !r.contains("type") || !r.contains("seqlen") || !r.at("seqlen").is_number_integer()) continue;
    const int64_t s = r.at("seqlen").get<int64_t>();
    const std::string type = r.at("type").is_string() ? r.at("type").get<std::string>() : "";
    auto mark = [&](PointOutcome o) {
      auto it = out.find(s);
      // measured wins over anything; oom over failed
      if (it == out.end() || static_cast<int>(o) < static_cast<int>(it->second)) out[s] = o;
    };
    if (type == "train_step") {
      mark(r.value("warmup", false) ? PointOutcome::failed : PointOutcome::measured);
    } else if (type == "train_oom") {
      mark(PointOutcome::oom);
    } else if (type == "train_error") {
      mark(PointOutcome::failed);
    }
  }
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
  if (fit_ && fail_) {
    if (*fail_ - *fit_ <= granularity_) return std::nullopt;
    const int64_t mid = round(*fit_ + (*fail_ - *fit_) / 2);
    if (mid <= *fit_ || mid >= *fail_) return std::nullopt;
    return mid;
  }
  if (fit_) {
    const int64_t up = round(*fit_ * 2);
    return up > ceiling_ || up <= *fit_ ? std::nullopt : std::optional<int64_t>(up);
  }
  if (fail_) {
    const int64_t down = round(*fail_ / 2);
    return down >= *fail_ ? std::nullopt : std::optional<int64_t>(down);
  }
  return std::nullopt;
}

}  // namespace ub
