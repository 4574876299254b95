// How numbers look in tables: fixed precision, "N/A" for what cannot be computed, and catalog
// figures printed as their value or their state ("unknown", "unsupported", "supported").
#pragma once

#include <optional>
#include <string>

#include "facts/figure.hpp"

namespace ub::report {

std::string num(std::optional<double> v, int precision = 1);
std::string ratio(std::optional<double> v);    // "2.28x" or "N/A"
std::string percent(std::optional<double> v, int precision = 1);  // from a fraction
std::string figure(const Figure& f);

}  // namespace ub::report
