// An attention micro-benchmark as `compare` reads it: bench_flash_attn.py's output (a
// `# gpu=... backend=... causal=... nheads=... nheads_kv=... head_dim=...` header, then one JSON
// object per sequence length {"seqlen", "fwd_ms", "fwd_tflops", "fwd_bwd_ms", "fwd_bwd_tflops"})
// or our `attention` records, whose points carry the same fields. Errors name the file and line;
// blank and unrecognised lines are counted in warnings.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/line_source.hpp"
#include "records/attention_records.hpp"
#include "records/provenance.hpp"

namespace ub {

struct AttentionLog {
  std::string path, gpu;
  std::map<std::string, std::string> header;  // the `# gpu=` line, or our context's configuration
  std::vector<AttentionRecord> points;        // sorted by seqlen
  std::vector<std::string> warnings;
  Provenance provenance;  // what the numbers are (records/provenance.hpp)
};

AttentionLog read_attention_log(const LineSource& t);

}  // namespace ub
