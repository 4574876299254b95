// Telling logs apart by content; see log_kind.hpp.
#include "core/readers/log_kind.hpp"

#include <algorithm>
#include <functional>
#include <string>

#include "core/records/record_file.hpp"
#include "core/readers/sweep_log.hpp"
#include "core/text.hpp"

namespace ub {

namespace {

bool any_line(const TextLines& t, const std::function<bool(const std::string&)>& f) {
  return std::any_of(t.lines.begin(), t.lines.end(), f);
}

// Whether a line holds `key` with a string value starting with `value`.
bool has_string_field(const TextLines& t, const std::string& key, const std::string& value) {
  const std::string compact = "\"" + key + "\":\"" + value, spaced = "\"" + key + "\": \"" + value;
  return any_line(t, [&](const std::string& l) {
    return l.find(compact) != std::string::npos || l.find(spaced) != std::string::npos;
  });
}

}  // namespace

bool has_record_type(const TextLines& t, const std::string& type) { return has_string_field(t, "type", type); }

std::string_view to_string(LogKind k) {
  switch (k) {
    case LogKind::training: return "a training log";
    case LogKind::attention: return "an attention micro-benchmark log";
    case LogKind::decomposition: return "a step decomposition";
    case LogKind::mamf: return "a MAMF log";
    case LogKind::nccl: return "a collective benchmark log";
    case LogKind::prediction: return "a prediction (predict's records)";
    case LogKind::unknown: return "not a log compare reads";
  }
  return "not a log compare reads";
}

LogKind detect_log_kind(const TextLines& t) {
  if (looks_like_records(t)) {
    // `decompose` of our engine records the timed steps too: its decomposition is what it is about.
    if (has_record_type(t, "decomposition") && has_string_field(t, "command", "decompose")) return LogKind::decomposition;
    if (has_record_type(t, "prediction")) return LogKind::prediction;
    if (has_record_type(t, "train_step") || has_record_type(t, "train_oom")) return LogKind::training;
    if (has_record_type(t, "mamf")) return LogKind::mamf;
    if (has_record_type(t, "attention")) return LogKind::attention;
    if (has_record_type(t, "nccl")) return LogKind::nccl;
    if (has_record_type(t, "decomposition")) return LogKind::decomposition;
    return LogKind::unknown;
  }
  if (looks_like_sweep_log(t)) return LogKind::training;
  if (any_line(t, [](const std::string& l) { return l.find("\"fwd_tflops\"") != std::string::npos; })) return LogKind::attention;
  if (any_line(t, [](const std::string& l) { return l.find("\"busbw_gbps\"") != std::string::npos; })) return LogKind::nccl;
  if (any_line(t, [](const std::string& l) { return trim(l).rfind("# wall step=", 0) == 0; })) return LogKind::decomposition;
  if (any_line(t, [](const std::string& l) { return l.find("(median)") != std::string::npos || l.find("=> the best outcomes were") != std::string::npos; })) {
    return LogKind::mamf;
  }
  return LogKind::unknown;
}

}  // namespace ub
