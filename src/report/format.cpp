// Number formatting for tables; see format.hpp.
#include "report/format.hpp"

#include <fmt/format.h>

#include "base/text.hpp"

namespace ub::report {

namespace {

std::string fixed(double v, int precision) { return fixed_decimals(v, precision); }

}  // namespace

std::string num(std::optional<double> v, int precision) { return v ? fixed(*v, precision) : "N/A"; }

std::string ratio(std::optional<double> v) { return v ? fixed(*v, 2) + "x" : "N/A"; }

std::string percent(std::optional<double> v, int precision) { return v ? fixed(*v * 100.0, precision) + "%" : "N/A"; }

std::string figure(const Figure& f) {
  // Shortest form that reads back the same: 989, 494.5, 3.35.
  return f.known() ? fmt::format("{}", f.value) : std::string(to_string(f.state));
}

}  // namespace ub::report
