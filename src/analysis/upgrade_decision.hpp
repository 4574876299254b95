// The decision from what two GPUs measured (records/measurement_set.hpp: two suite folders, or
// files of each): one verdict, then its reasons in the ml-engineering guide's order.
//
//   the verdict, one of
//     UPGRADE                      cheaper per token at every length measured on both GPUs
//     UPGRADE FOR LONG CONTEXT     cheaper from N tokens on only (where the speedup crosses the
//                                  break-even), or only the new GPU fits the longer lengths
//     UPGRADE FOR CAPABILITY       the new GPU executes a dtype the recipe needs (--need-dtype), or
//                                  holds a length the team needs (--need-seqlen) that the old one
//                                  cannot on one GPU with any memory lever measured (--levers)
//     DO NOT UPGRADE               it costs more per token at every length
//     MEASURE MORE                 what would settle it is named (a length whose interval holds
//                                  the break-even, a part neither folder has)
//     SAME GPU                     both sets are one GPU model: the differences are noise or setup
//   then the reasons: capability, stack match, the speedup per length with its interval, $/token
//   against the price ratio, wall-clock time, memory headroom (the longest sequence each holds,
//   measured or fitted, per memory lever where runs with other levers are given: the lever that
//   reaches the length the team needs on the old GPU and what it costs in step time), and the micro-benchmarks beside the catalog's ratios (the matmul ceiling,
//   the step's own products, attention per length, HBM, the step's buckets).
//
// Without prices there is no $/token: the verdict says what the speedup is and asks for them. A
// software stack that differs between the two is refused unless `force`; forced, it leads the page.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/compare.hpp"
#include "analysis/decide.hpp"
#include "analysis/log_comparisons.hpp"
#include "analysis/memory_headroom.hpp"
#include "analysis/memory_levers.hpp"
#include "analysis/nccl_comparison.hpp"
#include "analysis/predict/prediction.hpp"
#include "records/measurement_set.hpp"

namespace ub {

enum class UpgradeVerdict { upgrade, long_context, short_context, capability, do_not_upgrade, measure_more, same_gpu, no_prices };
const char* to_string(UpgradeVerdict v);

struct UpgradeOptions {
  std::optional<double> price_old, price_new;  // USD per GPU-hour
  std::vector<Dtype> need;                     // dtypes the recipe needs
  std::optional<int64_t> need_seqlen;          // a length the team needs to train
  // Runs of the old GPU's workload with other memory levers (analysis/memory_levers.hpp): which
  // of them reaches need_seqlen, and at what step time, beside the suite's own sweep.
  std::vector<const RunLog*> old_levers;
  bool force = false;                          // compare across software stacks
  std::optional<double> power_usd_per_kwh;     // electricity, for GPUs owned (energy_summary.hpp)
  double pue = 1.0;
};

struct RatioRow {
  std::string what;
  std::optional<double> old_value, new_value, measured_ratio, catalog_ratio;
  std::string unit, note;
};

struct UpgradeDecision {
  UpgradeVerdict verdict = UpgradeVerdict::measure_more;
  std::string line;  // the verdict in one line
  Provenance provenance;                      // the weaker of the two sets'
  // The old set's own: what the old GPU's rows are, when the new side is predicted.
  Provenance old_provenance;
  bool new_predicted = false;  // part 2 of the new GPU predicted (decide_predicted_upgrade), not measured
  std::vector<std::string> provenance_notes;  // one line per set that is not measurements
  std::string old_gpu, new_gpu;
  const Accelerator* old_accel = nullptr;
  const Accelerator* new_accel = nullptr;
  std::map<std::string, std::string> old_stack, new_stack;
  std::vector<std::string> stack_differences;  // what differs, "component: old vs new"
  std::vector<std::string> forced_workload;    // what makes the training runs two workloads (--force)
  std::vector<std::string> reasons;            // the guide's order
  std::optional<Comparison> training;
  std::optional<MamfComparison> ceiling;
  std::optional<AttentionComparison> attention;
  std::vector<DecompositionComparison> decompositions;
  std::optional<NcclComparison> nccl;
  std::vector<RatioRow> ratios;  // micro-benchmarks against the catalog: ceiling, step products, HBM
  LongestSequence old_longest, new_longest;
  bool capability_unsure = false;  // the verdict measures first: a needed length's fit rests on a guess
  std::optional<LeverLadder> levers;  // the old sweep and the old_levers runs, read for both GPUs
  Decision specs;  // the catalog's part of it: capability gate, memory, break-even
  std::vector<std::string> warnings;
};

// UsageError for two sets that cannot be compared: another workload, a stack that differs
// (unless forced), a price of zero.
UpgradeDecision decide_upgrade(const MeasurementSet& old_set, const MeasurementSet& new_set, const Catalog& catalog,
                               const std::filesystem::path& models_dir, const UpgradeOptions& options);

// The same decision with part 2 PREDICTED for a GPU not measured: the old set's sweep beside
// `predictions` of the new GPU's step at its lengths (analysis/predict/), the new GPU's memory
// headroom from the old run's memory fit at the new GPU's capacity, the catalog's part as ever.
// Every row and the verdict are PREDICTED; the old set's own provenance carries through.
UpgradeDecision decide_predicted_upgrade(const MeasurementSet& old_set, const std::vector<Prediction>& predictions,
                                         const Accelerator& to, const Catalog& catalog,
                                         const std::filesystem::path& models_dir, const UpgradeOptions& options);

}  // namespace ub
