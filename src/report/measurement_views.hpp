// One view per kind of measurement record: the table (and --json) a measuring command prints
// when it ends, built from its records. `mamf`, `bandwidth`, `attention`, `nccl` and `decompose`
// show their results through these, and `report` shows the same records through the same views,
// so a figure looks the same wherever it is read.
//
// Each view takes the records of one run, grouped by the GPU that measured them, and the catalog
// (the ceilings "of peak" and "of spec" are read against); it returns the document and the JSON
// with the stable keys of docs/json.md.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "facts/catalog.hpp"
#include "records/attention_records.hpp"
#include "records/bandwidth_records.hpp"
#include "records/decomposition_records.hpp"
#include "records/mamf_result.hpp"
#include "records/nccl_records.hpp"
#include "records/readers/nccl_log.hpp"
#include "report/document.hpp"

namespace ub::report {

struct View {
  Document doc;
  nlohmann::json json = nlohmann::json::array();
};

// The records one GPU wrote in a run.
template <class Records>
struct OnGpu {
  int device = 0;
  std::string gpu;  // the name the driver reports
  Records records;
};

// `mamf`: every shape, then per GPU the best shape, the means across shapes and the fraction of
// the dense peak and of the published MAMF.
View mamf_view(const std::vector<OnGpu<MamfOutcome>>& runs, Dtype dtype, bool search, const Catalog& catalog);

// `bandwidth`: per GPU, each operation and size against the catalog's HBM figure.
View bandwidth_view(const std::vector<OnGpu<std::vector<BandwidthRecord>>>& runs, const Catalog& catalog);

// `attention`: per GPU, forward and forward+backward time and TFLOPS per sequence length.
View attention_view(const std::vector<OnGpu<std::vector<AttentionRecord>>>& runs, const AttentionConfig& config);

// `nccl`: every point of a run, titled `title`, against `gpu`'s interconnect figure (null: unknown);
// `checked`: the points are ours, each checked exactly (a peer's are not: no #wrong).
View nccl_view(const std::string& title, const std::vector<NcclPoint>& points, const Accelerator* gpu, bool checked);

// `decompose`: one step's buckets, each with its share, its range over the steps and its rate.
void add_decomposition_block(Document& doc, const DecompositionRecord& r);

}  // namespace ub::report
