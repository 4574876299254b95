// Telling logs apart by content; see log_kind.hpp.
#include "core/readers/log_kind.hpp"

#include <string>

#include "core/records/record_file.hpp"
#include "core/readers/sweep_log.hpp"
#include "core/text.hpp"

namespace ub {

namespace {

// `key` with a string value starting with `value`, as a JSON line writes it (with or without a space).
struct StringField {
  StringField(const std::string& key, const std::string& value)
      : compact("\"" + key + "\":\"" + value), spaced("\"" + key + "\": \"" + value) {}
  bool in(std::string_view line) const {
    return line.find(compact) != std::string_view::npos || line.find(spaced) != std::string_view::npos;
  }
  std::string compact, spaced;
};

// The marks a kind is told by, each seen somewhere in the file (one pass over it).
enum Mark : unsigned {
  decomposition = 1, decompose_command = 2, prediction = 4, train = 8, mamf = 16, attention = 32, nccl = 64,
  sweep_block = 128, fwd_tflops = 256, busbw = 512, wall_step = 1024, mamf_text = 2048
};

unsigned marks_of(const LineSource& t, bool records) {
  static const StringField type_decomposition("type", "decomposition"), command_decompose("command", "decompose"),
      type_prediction("type", "prediction"), type_train_step("type", "train_step"), type_train_oom("type", "train_oom"),
      type_mamf("type", "mamf"), type_attention("type", "attention"), type_nccl("type", "nccl");
  unsigned marks = 0;
  const auto mark = [&](bool seen, Mark m) { marks |= seen ? m : 0u; };
  t.for_each([&](const Line& l) {
    const std::string_view line = l.text;
    if (records) {
      mark(type_decomposition.in(line), decomposition);
      mark(command_decompose.in(line), decompose_command);
      mark(type_prediction.in(line), prediction);
      mark(type_train_step.in(line) || type_train_oom.in(line), train);
      mark(type_mamf.in(line), mamf);
      mark(type_attention.in(line), attention);
      mark(type_nccl.in(line), nccl);
      return;
    }
    mark(is_sweep_block_line(line), sweep_block);
    mark(line.find("\"fwd_tflops\"") != std::string_view::npos, fwd_tflops);
    mark(line.find("\"busbw_gbps\"") != std::string_view::npos, busbw);
    mark(trim(line).rfind("# wall step=", 0) == 0, wall_step);
    mark(line.find("(median)") != std::string_view::npos || line.find("=> the best outcomes were") != std::string_view::npos,
         mamf_text);
  });
  return marks;
}

}  // namespace

bool has_record_type(const LineSource& t, const std::string& type) {
  const StringField field("type", type);
  return t.any([&](std::string_view l) { return field.in(l); });
}

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

LogKind detect_log_kind(const LineSource& t) {
  const bool records = looks_like_records(t);
  const unsigned m = marks_of(t, records);
  if (records) {
    // `decompose` of our engine records the timed steps too: its decomposition is what it is about.
    if ((m & decomposition) && (m & decompose_command)) return LogKind::decomposition;
    if (m & prediction) return LogKind::prediction;
    if (m & train) return LogKind::training;
    if (m & mamf) return LogKind::mamf;
    if (m & attention) return LogKind::attention;
    if (m & nccl) return LogKind::nccl;
    if (m & decomposition) return LogKind::decomposition;
    return LogKind::unknown;
  }
  if (m & sweep_block) return LogKind::training;
  if (m & fwd_tflops) return LogKind::attention;
  if (m & busbw) return LogKind::nccl;
  if (m & wall_step) return LogKind::decomposition;
  if (m & mamf_text) return LogKind::mamf;
  return LogKind::unknown;
}

}  // namespace ub
