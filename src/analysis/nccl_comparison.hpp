// `compare` for two collective benchmarks (`nccl` records, or the torch.distributed peer's
// lines): point by point (collective, dtype, place, size), the time per call of each and its
// speedup new/old (where the two jobs have different numbers of ranks, busbw's ratio: a time is
// of its own job). Where both runs carry their samples the speedup has an interval and a verdict
// (analysis/speedup.hpp); a peer's one figure gives a bare ratio, said so. busbw is set against each
// GPU's interconnect figure in the catalog ("of spec", facts/collectives.hpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/speedup.hpp"
#include "facts/catalog.hpp"
#include "records/readers/nccl_log.hpp"

namespace ub {

struct NcclSide {
  std::optional<double> time_us, busbw_gbps, of_spec;
};

struct NcclComparisonRow {
  NcclPointKey key;
  NcclSide old_side, new_side;
  std::optional<double> ratio;     // old time / new time: > 1 is the new run faster (busbw new / old
                                   // where the jobs' sizes differ)
  std::optional<Speedup> speedup;  // with its interval, when both points carry samples
};

struct NcclComparison {
  std::string old_path, new_path, old_gpu, new_gpu, old_source, new_source;
  int old_world = 0, new_world = 0;
  std::map<std::string, std::string> old_details, new_details;
  std::optional<double> interconnect_ratio;  // the catalog's new / old
  std::vector<NcclComparisonRow> rows;       // every point either run has, in order
  bool busbw_ratio = false;                  // the jobs' sizes differ: the rows' speedups are busbw's
  std::vector<std::string> warnings;
};

NcclComparison compare_nccl(const NcclLog& o, const NcclLog& n, const Catalog& catalog);

void to_json(nlohmann::json& j, const NcclComparison& c);

}  // namespace ub
