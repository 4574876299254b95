// One catalog figure: a number, or an honest statement that there is none.
//
// The catalog never falls back to another GPU's figure: what is not published is "unknown" and
// every computation over it yields N/A. Peaks also distinguish "unsupported" (the hardware cannot
// execute the dtype at all, which is what the capability gate reads) from "supported" (it can,
// but no peak is published). Each figure carries the id of its source.
#pragma once

#include <optional>
#include <string>

namespace ub {

enum class FigureState { value, unknown, supported, unsupported };

struct Figure {
  FigureState state = FigureState::unknown;
  double value = 0.0;   // meaningful only when state == value
  std::string source;   // id into the catalog's source table
  std::string note;     // optional qualifier ("read here; spec math uses 1830")

  bool known() const { return state == FigureState::value; }
  std::optional<double> get() const {
    return known() ? std::optional<double>(value) : std::nullopt;
  }
  // Can the hardware execute it? nullopt when the catalog does not know.
  std::optional<bool> executes() const {
    switch (state) {
      case FigureState::value:
      case FigureState::supported: return true;
      case FigureState::unsupported: return false;
      case FigureState::unknown: return std::nullopt;
    }
    return std::nullopt;
  }
};

std::string_view to_string(FigureState s);

}  // namespace ub
