// The training-step sweep log of the ml-engineering guide (its run_sweep.sh around benchmark.py),
// exactly as shared/reference/formats.md shows it:
//
//   ===== seq_len=8192 =====
//   # env: python=3.12.12 torch=2.13.0 cuda=13.0 ...
//   # gpu=NVIDIA H200 attn_backend=flash_attention_3 ... model_size=8b world_size=8 batch_size=1
//   {"step": 0, "warmup": true, "exec_time_ms": "5437.08", "tflops": "77.55", "peak_mem_gib": "16.3"}
//
// Numbers may be JSON strings or numbers. A block with a line containing "out of memory" (or an
// "Error" line) and no steady steps is an out-of-memory point. Blank lines, other log lines,
// unknown keys and a truncated last line are tolerated and counted in warnings; a step line that
// is not JSON is an error naming the line.
#pragma once

#include "base/line_source.hpp"
#include "records/run_log.hpp"

namespace ub {

bool looks_like_sweep_log(const LineSource& t);
// Whether a line starts a block (`===== seq_len=`): what looks_like_sweep_log looks for.
bool is_sweep_block_line(std::string_view line);
RunLog read_sweep_log(const LineSource& t, WarmupOnly warmup_only = WarmupOnly::refuse);

// model_size=8b -> llama-3.1-8b (benchmark.py's naming); nullopt for sizes it does not name.
std::optional<std::string> guide_model_preset(const std::string& model_size);

}  // namespace ub
