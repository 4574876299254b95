// The ranks that the traces of one folder say they are (Kineto's distributedInfo): a folder is one
// job's traces, each rank once. A rank two traces claim, or two world sizes, is two jobs' traces
// mixed in one folder, whose steps would be decomposed as one job's: refused naming both files.
// A rank left without a trace is said (the decompositions are then of the ranks given).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/decompose/trace_decomposition.hpp"

namespace ub::trace {

class JobRanks {
 public:
  // UsageError for `file`'s trace whose rank another trace of the folder claimed, or whose world
  // size is another's. A trace that says no rank is taken as it is.
  void add(const TraceDecomposition& d, const std::string& file);
  // "2 of the job's 4 ranks have no trace in ranks/ (rank 2, 3): ...", and traces that say no
  // rank beside ones that do; or nothing.
  std::optional<std::string> missing(const std::string& folder) const;

 private:
  std::vector<std::string> unranked_;                     // traces of the folder that say no rank
  std::optional<std::pair<int64_t, std::string>> world_;  // its size, and the first file that said it
  std::map<int64_t, std::string> ranks_;                  // rank -> the file that said it
};

}  // namespace ub::trace
