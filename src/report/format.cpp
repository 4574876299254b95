// Number formatting for tables; see format.hpp.
#include "report/format.hpp"

#include <fmt/format.h>

#include <cmath>

namespace ub::report {

namespace {

// `v` to `precision` decimals; a figure left with fewer than two significant digits there (a
// $/Mtok of a cheap GPU, 0.0004 or 0.0053) keeps two instead of reading as nothing or as a step.
std::string fixed(double v, int precision) {
  if (v != 0 && std::isfinite(v) && std::abs(v) < std::pow(10.0, 1 - precision)) return fmt::format("{:.2g}", v);
  return fmt::format("{:.{}f}", v, precision);
}

}  // namespace

std::string num(std::optional<double> v, int precision) { return v ? fixed(*v, precision) : "N/A"; }

std::string ratio(std::optional<double> v) { return v ? fixed(*v, 2) + "x" : "N/A"; }

std::string percent(std::optional<double> v, int precision) { return v ? fixed(*v * 100.0, precision) + "%" : "N/A"; }

std::string figure(const Figure& f) {
  // Shortest form that reads back the same: 989, 494.5, 3.35.
  return f.known() ? fmt::format("{}", f.value) : std::string(to_string(f.state));
}

}  // namespace ub::report
