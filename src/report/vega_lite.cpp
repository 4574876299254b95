// Vega-Lite specs for charts; see chart.hpp. Series become a colour-encoded line layer with
// points, their intervals a shaded area beneath, markers-only series a layer of crosses; reference
// lines dashed rules, each dash named in a legend of its own.
#include <fmt/format.h>

#include "report/chart.hpp"

namespace ub::report {

namespace {

// One bar per category, its segments the series stacked in their order.
nlohmann::json stacked_bars(const Chart& c) {
  using nlohmann::json;
  json values = json::array(), order = json::array(), categories = json::array();
  for (size_t i = 0; i < c.series.size(); ++i) {
    order.push_back(c.series[i].name);
    for (const auto& [x, y] : c.series[i].points) {
      const auto k = static_cast<size_t>(x);
      if (k < c.categories.size()) values.push_back({{"category", c.categories[k]}, {"y", y}, {"series", c.series[i].name}, {"order", i}});
    }
  }
  for (const std::string& k : c.categories) categories.push_back(k);
  return {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
          {"title", c.title},
          {"width", 520},
          {"height", 300},
          {"data", {{"values", values}}},
          {"mark", {{"type", "bar"}}},
          {"encoding",
           {{"x", {{"field", "category"}, {"type", "nominal"}, {"title", c.x_label}, {"sort", categories},
                   {"axis", {{"labelAngle", 0}, {"labelLimit", 240}}}}},
            {"y", {{"field", "y"}, {"type", "quantitative"}, {"title", c.y_label}, {"stack", "zero"}}},
            {"color", {{"field", "series"}, {"type", "nominal"}, {"title", nullptr}, {"sort", order}}},
            {"order", {{"field", "order"}, {"type", "quantitative"}}},
            {"tooltip", json::array({{{"field", "category"}}, {{"field", "series"}},
                                     {{"field", "y"}, {"title", c.y_label}, {"format", ".3~f"}}})}}}};
}

}  // namespace

nlohmann::json vega_lite_spec(const Chart& c) {
  using nlohmann::json;
  if (!c.categories.empty()) return stacked_bars(c);
  json lines = json::array(), fits = json::array(), markers = json::array(), bands = json::array();
  for (const Series& s : c.series) {
    json& to = s.style == SeriesStyle::markers ? markers : s.style == SeriesStyle::line ? fits : lines;
    for (const auto& [x, y] : s.points) to.push_back({{"x", x}, {"y", y}, {"series", s.name}});
    for (const auto& [x, low, high] : s.band) bands.push_back({{"x", x}, {"low", low}, {"high", high}, {"series", s.name}});
  }
  json x_scale = c.log2_x ? json{{"type", "log"}, {"base", 2}} : json{{"type", "linear"}};
  if (c.x_min && c.x_max) x_scale["domain"] = {*c.x_min, *c.x_max};
  const json x = {{"field", "x"}, {"type", "quantitative"}, {"title", c.x_label}, {"scale", x_scale}};
  const json colour = {{"field", "series"}, {"type", "nominal"}, {"title", nullptr}, {"legend", {{"labelLimit", 400}}}};
  const json y_scale = {{"zero", false}};  // a ratio near 2 is read off an axis near 2
  const json tooltip = json::array({{{"field", "series"}}, {{"field", "x"}, {"title", c.x_label}},
                                    {{"field", "y"}, {"title", c.y_label}, {"format", ".3~f"}}});
  json layers = json::array();
  if (!bands.empty()) {
    layers.push_back({{"data", {{"values", bands}}},
                      {"mark", {{"type", "area"}, {"opacity", 0.2}}},
                      {"encoding", {{"x", x}, {"y", {{"field", "low"}, {"type", "quantitative"}, {"title", c.y_label}, {"scale", y_scale}}},
                                    {"y2", {{"field", "high"}}}, {"color", colour}}}});
  }
  layers.push_back({{"data", {{"values", lines}}},
                    {"mark", {{"type", "line"}, {"point", true}}},
                    {"encoding", {{"x", x}, {"y", {{"field", "y"}, {"type", "quantitative"}, {"title", c.y_label}, {"scale", y_scale}}},
                                  {"color", colour}, {"tooltip", tooltip}}}});
  if (!fits.empty()) {
    layers.push_back({{"data", {{"values", fits}}},
                      {"mark", {{"type", "line"}, {"strokeWidth", 1.5}}},
                      {"encoding", {{"x", x}, {"y", {{"field", "y"}, {"type", "quantitative"}}}, {"color", colour}}}});
  }
  if (!markers.empty()) {
    layers.push_back({{"data", {{"values", markers}}},
                      {"mark", {{"type", "point"}, {"shape", "cross"}, {"size", 120}, {"filled", true}}},
                      {"encoding", {{"x", x}, {"y", {{"field", "y"}, {"type", "quantitative"}}}, {"color", colour},
                                    {"tooltip", tooltip}}}});
  }
  // Reference lines: each its own dash and colour, named in their own legend (no text on the plot).
  json rules = json::array();
  for (size_t i = 0; i < c.lines.size(); ++i) {
    rules.push_back({{"at", c.lines[i].at}, {"line", c.lines[i].name}, {"vertical", c.lines[i].vertical}});
  }
  static const std::vector<std::vector<int>> kDashes = {{6, 4}, {2, 3}, {10, 3, 2, 3}, {1, 2}, {8, 2}, {4, 4, 1, 4}};
  json dash_range = json::array(), names = json::array();
  for (size_t i = 0; i < c.lines.size(); ++i) {
    names.push_back(c.lines[i].name);
    dash_range.push_back(kDashes[i % kDashes.size()]);
  }
  const json dash = {{"field", "line"}, {"type", "nominal"}, {"title", "reference lines"},
                     {"scale", {{"domain", names}, {"range", dash_range}}},
                     {"legend", {{"symbolStrokeColor", "#555"}, {"labelLimit", 400}}}};
  for (const bool vertical : {false, true}) {
    json these = json::array();
    for (const json& r : rules) {
      if (r["vertical"].get<bool>() == vertical) these.push_back(r);
    }
    if (these.empty()) continue;
    json enc = {{"strokeDash", dash}, {"tooltip", json::array({{{"field", "line"}}, {{"field", "at"}, {"format", ".4~f"}}})}};
    if (vertical) enc["x"] = {{"field", "at"}, {"type", "quantitative"}, {"scale", x_scale}};
    else enc["y"] = {{"field", "at"}, {"type", "quantitative"}};
    layers.push_back({{"data", {{"values", these}}}, {"mark", {{"type", "rule"}, {"color", "#555"}, {"strokeWidth", 1.5}}},
                      {"encoding", enc}});
  }
  return {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
          {"title", c.title},
          {"width", 520},
          {"height", 300},
          {"layer", layers}};
}

}  // namespace ub::report
