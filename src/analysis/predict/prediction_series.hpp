// What makes prediction records one series, as `report` draws a file of them and `predict --out`
// appends to one: one pair of GPUs, one workload (model, depth, batch, and the levers and
// arithmetic of the step the prediction was made from, held to each other as `compare` holds
// two runs: analysis/compare.hpp's workload_differences), at most one prediction per sequence
// length. A file that mixed two would draw a 4-layer measurement against a 32-layer prediction,
// or two rows at one length, under one title.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "records/fields.hpp"
#include "records/run_log.hpp"

namespace ub {

// A prediction record's workload as the configuration of the run it was made from: its format,
// model, depth, batch and the workload keys it said (`compare`'s terms, workload_differences).
RunLog prediction_workload(const Fields& f);

class PredictionSeries {
 public:
  // Takes one prediction record; why it cannot join the ones taken so far, or nullopt when it can.
  // A record whose figures no prediction holds is a WorkError (prediction_record_check.hpp).
  std::optional<std::string> add(const Fields& prediction);

 private:
  std::optional<std::string> pair_;  // of the first record
  std::optional<RunLog> workload_;   // the first record's workload, as a run's configuration
  std::map<int64_t, int> lengths_;
};

}  // namespace ub
