// A chart as data: series of (x, y) points (with an interval band, or as markers alone) and
// reference lines, horizontal or vertical, drawn as lines; or, with
// `categories`, one stacked bar per category (x = the category's index) whose segments are the
// series (a step's buckets, one bar per run). One model, two
// renderers that are well-kept libraries, not drawing code of ours: a Vega-Lite spec for the
// HTML page (vega_lite.cpp) and a gnuplot script for PNG and SVG files (gnuplot.cpp).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ub::report {

// How a series is drawn: measured points joined by a line, a line alone (a fit), or markers
// alone (out-of-memory lengths).
enum class SeriesStyle { line_and_points, line, markers };

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;
  // The 95% interval at each point (x, low, high), drawn as a shaded band in the series' colour.
  std::vector<std::array<double, 3>> band = {};
  SeriesStyle style = SeriesStyle::line_and_points;
};

// A reference line across the chart: horizontal at `at` (a ratio, a capacity), or vertical at x =
// `at` (a length). Each has its own colour and dash and its name in the legend, never written on
// the plot, so names cannot collide with each other or the data.
struct ReferenceLine {
  std::string name;
  double at = 0;
  bool vertical = false;
};

struct Chart {
  std::string id;     // file stem: "tflops", "speedup", ...
  std::string title;
  std::string x_label, y_label;
  bool log2_x = true;  // sequence lengths double
  std::vector<Series> series;
  std::vector<ReferenceLine> lines;
  std::vector<std::string> categories;  // non-empty: stacked bars, one per category
  std::optional<double> x_min = std::nullopt, x_max = std::nullopt;  // the x range; the data's when unset
};

nlohmann::json vega_lite_spec(const Chart& c);

// Writes <dir>/<id>.png and <dir>/<id>.svg with gnuplot. Throws WorkError naming the package
// to install when gnuplot is missing, or gnuplot's own message when it fails.
void render_with_gnuplot(const Chart& c, const std::string& dir);

}  // namespace ub::report
