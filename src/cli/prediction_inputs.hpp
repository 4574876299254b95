// From the files a user gives to the predictions: what `predict` prints and what `decide` folds
// into its Part 2 when only the old GPU was measured. One place reads the inputs (decompositions,
// training logs, micro-benchmarks of either GPU), finds the old GPU, carries steps to other
// lengths and predicts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/predict/prediction.hpp"
#include "cli/context.hpp"

namespace ub::cli {

struct PredictionRequest {
  std::vector<std::string> inputs, measured;
  std::string to, from, model, seqlens, carry_from;
  int64_t layers = 0;     // the depth the inputs measured, where their records do not say it (0: the model's)
  int64_t to_layers = 0;  // carry to this depth (0: keep the measured one)
  std::optional<double> price_from, price_to;  // parsed as parse_prices parses them (cli/arguments.hpp)
};

struct PredictionRun {
  const Accelerator* from = nullptr;
  const Accelerator* to = nullptr;
  std::vector<Prediction> predictions;
  std::vector<std::string> warnings;
  std::optional<ModelShape> model;  // the model predicted, at its full depth: --model's, or the inputs' own
};

// UsageError for bad input (an unreadable kind of file, GPUs that do not match).
PredictionRun run_predictions(Context& ctx, const PredictionRequest& r);

}  // namespace ub::cli
