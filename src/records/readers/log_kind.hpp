// What kind of measurement a log holds, told from its content (never its name), so `compare` and
// `report` open two files of one kind: a training run, an attention micro-benchmark, a step
// decomposition, a matmul-ceiling (MAMF) run or a collective benchmark.
#pragma once

#include <string_view>

#include "base/line_source.hpp"

namespace ub {

enum class LogKind { training, attention, decomposition, mamf, nccl, prediction, unknown };
std::string_view to_string(LogKind k);
LogKind detect_log_kind(const LineSource& t);
// Whether a line holds a record whose type starts with `type` ("mamf" finds mamf_summary too).
bool has_record_type(const LineSource& t, const std::string& type);

}  // namespace ub
