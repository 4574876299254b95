// A step decomposition as bench_decompose.py prints it: `# gpu=...` and `# wall step=... ms ...`
// headers, then bucket lines `NAME  <x> TFLOP  <x> ms  <x> TFLOPS  MFU <x>%` (the name may have
// spaces; `TOTAL` last); or `decompose`'s records (records/decomposition_records.hpp), the
// first decomposition of the file (a file of several GPUs says so in warnings). Errors name the
// file and line; other lines are counted in warnings.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/line_source.hpp"
#include "records/decomposition_records.hpp"
#include "records/provenance.hpp"

namespace ub {


struct DecompositionBucket {
  std::string name;
  double ms = 0;
  std::optional<double> tflop, tflops;  // absent where the FLOPs were not known
  std::optional<double> mfu_percent;
};

struct DecompositionLog {
  std::string path, gpu;
  std::map<std::string, std::string> header;   // the `# gpu=` line
  std::optional<int64_t> seqlen;               // its `seq=`, checked to be a length
  int64_t batch = 1;                           // sequences per step: a printout's `bs=` (or `batch=`), our records' batch
  std::map<std::string, std::string> summary;  // the `# wall step=` line, as written
  std::vector<DecompositionBucket> buckets;
  std::vector<std::string> warnings;
  Provenance provenance;  // what the numbers are (records/provenance.hpp)
  // Our records: every decomposition of the file (one per GPU or rank), each checked as the first
  // is; the first is the one the fields above describe. Empty for a printout.
  std::vector<DecompositionRecord> records;
  std::vector<std::string> record_where;  // each record's file and line, for messages
};

DecompositionLog read_decomposition_log(const LineSource& t);

// The model bench_decompose.py trains (the ml-engineering guide's Llama-3.1-8B, all its layers): a
// printout names none.
inline constexpr const char* kPrintoutModel = "llama-3.1-8b";

// A printout without its TOTAL line with the one it implies: its buckets' sum (check_total held the
// `# wall` step to it), so that every reader (compare, the history, predict) has one step. Our
// records and a printout with its line are returned as they are.
DecompositionLog with_total_line(DecompositionLog log);

// bench_decompose.py's printout as a `decomposition` record (source "bench_decompose.py"): its
// buckets with their shares of the TOTAL, the length from its header.
DecompositionRecord printout_record(const DecompositionLog& d);

}  // namespace ub
