// Readers for the other measurements people bring from the seed's toolkit, and for our own
// `mamf` records, so `compare` can put two of a kind side by side:
//
//  * attention micro-benchmark (bench_flash_attn.py): a `# gpu=... backend=... causal=...
//    nheads=... nheads_kv=... head_dim=...` header, then one JSON object per sequence length
//    {"seqlen", "fwd_ms", "fwd_tflops", "fwd_bwd_ms", "fwd_bwd_tflops"};
//  * step decomposition (bench_decompose.py): `# gpu=...` and `# wall step=... ms ...` headers,
//    then bucket lines `NAME  <x> TFLOP  <x> ms  <x> TFLOPS  MFU <x>%` (the name may have
//    spaces; `TOTAL` last);
//  * MAMF: mamf-finder.py's output (per-shape `N | <x>(mean) <x>(median) <x>(max) @ MxNxK`
//    lines and the `mean: / median: / max:` footer) or upgradebench `mamf` records.
//
// Errors name the file and line; blank and unrecognised lines are counted in warnings.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/mamf_result.hpp"
#include "core/readers/text_lines.hpp"

namespace ub {

struct AttentionPoint {
  int64_t seqlen = 0;
  double fwd_ms = 0, fwd_tflops = 0;
  std::optional<double> fwd_bwd_ms, fwd_bwd_tflops;
};

struct AttentionLog {
  std::string path, gpu;
  std::map<std::string, std::string> header;
  std::vector<AttentionPoint> points;  // sorted by seqlen
  std::vector<std::string> warnings;
};

struct DecompositionBucket {
  std::string name;
  double tflop = 0, ms = 0, tflops = 0;
  std::optional<double> mfu_percent;
};

struct DecompositionLog {
  std::string path, gpu;
  std::map<std::string, std::string> header;  // the `# gpu=` line
  std::map<std::string, std::string> summary; // the `# wall step=` line, as written
  std::vector<DecompositionBucket> buckets;
  std::vector<std::string> warnings;
};

struct MamfLog {
  std::string path, gpu, dtype, format;  // format: "mamf-finder" or "upgradebench"
  MamfOutcome outcome;                   // the shapes; the footer's best when only it is there
  std::optional<MamfShape> footer_mean, footer_median, footer_max;
  std::vector<std::string> warnings;
};

enum class LogKind { training, attention, decomposition, mamf, unknown };
std::string_view to_string(LogKind k);
LogKind detect_log_kind(const TextLines& t);

AttentionLog read_attention_log(const TextLines& t);
DecompositionLog read_decomposition_log(const TextLines& t);
MamfLog read_mamf_log(const TextLines& t);

}  // namespace ub
