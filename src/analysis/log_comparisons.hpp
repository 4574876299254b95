// `compare` for the measurements other than training runs: two attention micro-benchmarks per
// sequence length, two step decompositions per bucket, two MAMF runs by their best shapes, each
// with the catalog's hardware ratios beside the measured ones. These logs hold one figure per
// point, so the ratios carry no interval. The training comparison is analysis/compare.hpp; the
// report layer presents both.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "facts/catalog.hpp"
#include "records/readers/attention_log.hpp"
#include "records/readers/bandwidth_log.hpp"
#include "records/readers/decomposition_log.hpp"
#include "records/readers/mamf_log.hpp"

namespace ub {

// The catalog's new / old ratios for two GPUs named as their logs name them; `known` is false
// when either is not in the catalog (then every ratio is unknown).
struct HardwareRatios {
  bool known = false;
  std::string old_id, new_id;  // "" for a GPU the catalog does not know
  std::optional<double> peak_bf16, peak_fp8, mamf_bf16, mamf_fp8, bandwidth;
};
HardwareRatios hardware_ratios(const std::string& old_gpu, const std::string& new_gpu, const Catalog& catalog);

struct AttentionComparisonRow {
  int64_t seqlen = 0;
  std::optional<double> old_fwd, new_fwd, fwd_speedup, old_fwd_bwd, new_fwd_bwd, fwd_bwd_speedup;  // TFLOPS
};
// What the two logs' numbers are, one line per log that is not measurements ("EXAMPLE DATA:
// path: its own words"), for the top of every comparison of them.
std::vector<std::string> provenance_lines(const std::string& old_path, const Provenance& o, const std::string& new_path,
                                          const Provenance& n);

struct AttentionComparison {
  std::string old_gpu, new_gpu, old_backend, new_backend;
  Provenance provenance;                // the weaker of the two
  std::vector<std::string> provenance_notes;
  HardwareRatios hardware;
  std::vector<AttentionComparisonRow> rows;  // every sequence length either log has
};
AttentionComparison compare_attention(const AttentionLog& o, const AttentionLog& n, const Catalog& catalog);

struct DecompositionComparisonRow {
  std::string bucket;
  std::optional<double> old_ms, new_ms, speedup, old_tflops, new_tflops;
};
struct DecompositionComparison {
  std::string old_gpu, new_gpu, old_path, new_path;
  Provenance provenance;
  std::vector<std::string> provenance_notes;
  std::optional<std::string> old_step_ms, new_step_ms;  // the wall step as each printout says it
  HardwareRatios hardware;
  std::vector<DecompositionComparisonRow> rows;  // the old log's buckets in order, then the new one's others
  std::vector<std::string> warnings;             // each log's, named
};
// Steps of one workload only: different lengths, depths, batches or work are refused; where
// neither their lengths nor their work can be checked, `force` compares them anyway (said).
DecompositionComparison compare_decomposition(const DecompositionLog& o, const DecompositionLog& n,
                                              const Catalog& catalog, bool force = false);

struct MamfComparisonRow {
  std::string best;  // mean, median, max; then the arithmetic and geometric means over the shapes
  std::optional<double> old_tflops, new_tflops, ratio;
  std::optional<std::string> old_shape, new_shape;
};
struct MamfComparison {
  std::string old_gpu, new_gpu, old_format, new_format, old_dtype, new_dtype;
  Provenance provenance;
  std::vector<std::string> provenance_notes;
  size_t old_shapes = 0, new_shapes = 0;
  bool same_gpu = false;  // both files name the same device (its UUID)
  HardwareRatios hardware;
  std::vector<MamfComparisonRow> rows;
  std::vector<std::string> notes;  // what differs or is unknown, in words
};
// UsageError when the two runs measured different dtypes (a ceiling of one against another is not
// a speedup), unless `force`; then it is said in the notes.
MamfComparison compare_mamf(const MamfLog& o, const MamfLog& n, const Catalog& catalog, bool force = false);

// Two `bandwidth` runs, operation by operation and size by size: each GB/s (the median) and the
// new/old ratio, beside the datasheet HBM ratio; the sizes beyond L2 are what HBM does.
struct BandwidthComparisonRow {
  std::string op;
  int64_t bytes = 0;
  bool in_l2 = false;
  std::optional<double> old_gbps, new_gbps, ratio;
};
struct BandwidthComparison {
  std::string old_gpu, new_gpu;
  Provenance provenance;
  std::vector<std::string> provenance_notes;
  HardwareRatios hardware;
  std::vector<BandwidthComparisonRow> rows;
  std::optional<double> hbm_copy_ratio;  // the best copy beyond L2, new over old
};
BandwidthComparison compare_bandwidth(const BandwidthLog& o, const BandwidthLog& n, const Catalog& catalog);

void to_json(nlohmann::json& j, const HardwareRatios& h);
void to_json(nlohmann::json& j, const BandwidthComparison& c);
void to_json(nlohmann::json& j, const AttentionComparison& c);
void to_json(nlohmann::json& j, const DecompositionComparison& c);
void to_json(nlohmann::json& j, const MamfComparison& c);

}  // namespace ub
