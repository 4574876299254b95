// A chart as data: series of (x, y) points and horizontal reference lines, drawn as lines; or, with
// `categories`, one stacked bar per category (x = the category's index) whose segments are the
// series (a step's buckets, one bar per run). One model, two
// renderers that are well-kept libraries, not drawing code of ours: a Vega-Lite spec for the
// HTML page (vega_lite.cpp) and a gnuplot script for PNG and SVG files (gnuplot.cpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ub::report {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;
};

struct ReferenceLine {
  std::string name;
  double y = 0;
};

struct Chart {
  std::string id;     // file stem: "tflops", "speedup", ...
  std::string title;
  std::string x_label, y_label;
  bool log2_x = true;  // sequence lengths double
  std::vector<Series> series;
  std::vector<ReferenceLine> lines;
  std::vector<std::string> categories;  // non-empty: stacked bars, one per category
};

nlohmann::json vega_lite_spec(const Chart& c);

// Writes <dir>/<id>.png and <dir>/<id>.svg with gnuplot. Throws WorkError naming the package
// to install when gnuplot is missing, or gnuplot's own message when it fails.
void render_with_gnuplot(const Chart& c, const std::string& dir);

}  // namespace ub::report
