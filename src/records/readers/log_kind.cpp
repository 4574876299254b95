// Telling logs apart by content; see log_kind.hpp.
#include "records/readers/log_kind.hpp"

#include <string>
#include <string_view>

#include "base/text.hpp"
#include "records/readers/sweep_log.hpp"
#include "records/record_file.hpp"

namespace ub {

namespace {

// Calls `on_value` with what follows each `"key":"` (or `"key": "`) of a JSON line as our records
// write it: the string value and the rest of the line after it; one search for the key.
template <class F>
void string_values(std::string_view line, std::string_view key, F on_value) {
  for (size_t at = line.find(key); at != std::string_view::npos; at = line.find(key, at + 1)) {
    if (at == 0 || line[at - 1] != '"') continue;
    std::string_view rest = line.substr(at + key.size());
    if (rest.substr(0, 3) == "\":\"") on_value(rest.substr(3));
    else if (rest.substr(0, 4) == "\": \"") on_value(rest.substr(4));
  }
}

// The marks a kind is told by, each seen somewhere in the file (one pass over it).
enum Mark : unsigned {
  decomposition = 1, decompose_command = 2, prediction = 4, train = 8, mamf = 16, attention = 32, nccl = 64,
  sweep_block = 128, fwd_tflops = 256, busbw = 512, wall_step = 1024, mamf_text = 2048
};

// A pipe is told by its kept start (kPipeRereadBytes): a later pass could not read more of it again
// anyway, and the pass stops there instead of reading an endless stream (with no mark in it, it is
// not a log).
unsigned marks_of(const LineSource& t, bool records) {
  unsigned marks = 0;
  size_t bytes = 0;
  const auto mark = [&](bool seen, Mark m) { marks |= seen ? m : 0u; };
  t.scan([&](const Line& l) {
    bytes += l.text.size() + 1;
    const bool enough = bytes > kPipeRereadBytes && t.is_stream();  // this line is kept; the next may not be
    const std::string_view line = l.text;
    if (records) {
      string_values(line, "type", [&](std::string_view v) {
        mark(v.starts_with("decomposition"), decomposition);
        mark(v.starts_with("prediction"), prediction);
        mark(v.starts_with("train_step") || v.starts_with("train_oom"), train);
        mark(v.starts_with("mamf"), mamf);
        mark(v.starts_with("attention"), attention);
        mark(v.starts_with("nccl"), nccl);
      });
      string_values(line, "command", [&](std::string_view v) { mark(v.starts_with("decompose"), decompose_command); });
      return !enough;
    }
    mark(is_sweep_block_line(line), sweep_block);
    mark(line.find("\"fwd_tflops\"") != std::string_view::npos, fwd_tflops);
    mark(line.find("\"busbw_gbps\"") != std::string_view::npos, busbw);
    mark(trim(line).rfind("# wall step=", 0) == 0, wall_step);
    mark(line.find("(median)") != std::string_view::npos || line.find("=> the best outcomes were") != std::string_view::npos,
         mamf_text);
    return !enough;
  });
  return marks;
}

}  // namespace

bool has_record_type(const LineSource& t, const std::string& type) {
  return t.any([&](std::string_view l) {
    bool seen = false;
    string_values(l, "type", [&](std::string_view v) { seen = seen || v.starts_with(type); });
    return seen;
  });
}

std::string_view to_string(LogKind k) {
  switch (k) {
    case LogKind::training: return "a training log";
    case LogKind::attention: return "an attention micro-benchmark log";
    case LogKind::decomposition: return "a step decomposition";
    case LogKind::mamf: return "a MAMF log";
    case LogKind::nccl: return "a collective benchmark log";
    case LogKind::prediction: return "a prediction (predict's records)";
    case LogKind::unknown: return "not a log of a kind upgradebench reads";
  }
  return "not a log of a kind upgradebench reads";
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
