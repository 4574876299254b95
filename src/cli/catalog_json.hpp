// JSON views of catalog figures, shared by `specs` and `decide`: a peak is a number, null
// (unknown, or supported with no published peak) or "unsupported"; other figures a number or null.
#pragma once

#include <nlohmann/json.hpp>

#include "facts/catalog.hpp"

namespace ub::cli {

nlohmann::json peak_json(const Figure& f);
nlohmann::json figure_json(const Figure& f);
nlohmann::json optional_json(std::optional<double> v);
nlohmann::json accelerator_json(const Accelerator& a);

}  // namespace ub::cli
