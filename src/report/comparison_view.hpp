// How a comparison of two runs is shown: the document (tables and notes, for text, markdown and
// CSV) and the JSON with the stable keys of docs/json.md. `compare` prints them; `report` puts
// the same document into its markdown and HTML.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/compare.hpp"
#include "report/document.hpp"

namespace ub::report {

Document comparison_document(const Comparison& c);
// "FORCED: two workloads compared with --force (...): ..." from the "forced: " lines among
// `warnings`, for a page to say first; "" when nothing was forced.
std::string forced_headline(const std::vector<std::string>& warnings);
nlohmann::json comparison_json(const Comparison& c);

}  // namespace ub::report
