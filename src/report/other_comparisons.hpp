// `compare` for the other kinds of measurement (core/readers/other_logs.hpp): two attention
// micro-benchmarks per sequence length, two step decompositions per bucket, two MAMF searches
// by their best shapes, each with the catalog's hardware ratio beside the measured one. These
// logs hold one figure per point, so the ratios carry no interval; the output says so.
#pragma once

#include <nlohmann/json.hpp>

#include "core/catalog.hpp"
#include "core/readers/other_logs.hpp"
#include "report/document.hpp"

namespace ub::report {

struct View {
  Document doc;
  nlohmann::json json;
};

View compare_attention(const AttentionLog& o, const AttentionLog& n, const Catalog& cat);
View compare_decomposition(const DecompositionLog& o, const DecompositionLog& n, const Catalog& cat);
View compare_mamf(const MamfLog& o, const MamfLog& n, const Catalog& cat);

}  // namespace ub::report
