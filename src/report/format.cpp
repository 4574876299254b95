// Number formatting for tables; see format.hpp.
#include "report/format.hpp"

#include <fmt/format.h>

namespace ub::report {

std::string num(std::optional<double> v, int precision) {
  return v ? fmt::format("{:.{}f}", *v, precision) : "N/A";
}

std::string ratio(std::optional<double> v) { return v ? fmt::format("{:.2f}x", *v) : "N/A"; }

std::string percent(std::optional<double> v, int precision) {
  return v ? fmt::format("{:.{}f}%", *v * 100.0, precision) : "N/A";
}

std::string figure(const Figure& f) {
  // Shortest form that reads back the same: 989, 494.5, 3.35.
  return f.known() ? fmt::format("{}", f.value) : std::string(to_string(f.state));
}

}  // namespace ub::report
