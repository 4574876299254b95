// The energy table of two runs (analysis/energy_summary.hpp): tokens per joule on each GPU per
// length, their ratio, and the electricity per million tokens where a power price was given.
// `compare`, `report` and `decide` show the same block.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/compare.hpp"
#include "report/document.hpp"

namespace ub::report {

// Adds the block when a row has an energy figure; `tag` (MEASURED, EXAMPLE DATA, ...) is a last
// column when given.
void add_energy_block(Document& doc, const Comparison& c, const char* tag = nullptr);

// The rows' energy figures as the JSON of a comparison row carries them.
void add_energy_json(nlohmann::json& row, const CompareRow& r);

}  // namespace ub::report
