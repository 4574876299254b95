// Vega-Lite specs for charts; see chart.hpp. Series become a colour-encoded line layer with
// points; reference lines a dashed rule layer with their labels.
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
  json values = json::array();
  for (const Series& s : c.series) {
    for (const auto& [x, y] : s.points) values.push_back({{"x", x}, {"y", y}, {"series", s.name}});
  }
  json x_scale = c.log2_x ? json{{"type", "log"}, {"base", 2}} : json{{"type", "linear"}};
  json layers = json::array();
  layers.push_back({{"data", {{"values", values}}},
                    {"mark", {{"type", "line"}, {"point", true}}},
                    {"encoding",
                     {{"x", {{"field", "x"}, {"type", "quantitative"}, {"title", c.x_label}, {"scale", x_scale}}},
                      {"y", {{"field", "y"}, {"type", "quantitative"}, {"title", c.y_label}}},
                      {"color", {{"field", "series"}, {"type", "nominal"}, {"title", nullptr}}},
                      {"tooltip", json::array({{{"field", "series"}}, {{"field", "x"}, {"title", c.x_label}},
                                               {{"field", "y"}, {"title", c.y_label}, {"format", ".3~f"}}})}}}});
  if (!c.lines.empty()) {
    json rules = json::array();
    for (const ReferenceLine& l : c.lines) rules.push_back({{"y", l.y}, {"label", l.name}});
    layers.push_back({{"data", {{"values", rules}}},
                      {"mark", {{"type", "rule"}, {"strokeDash", {6, 4}}, {"color", "#888"}}},
                      {"encoding", {{"y", {{"field", "y"}, {"type", "quantitative"}}}}}});
    layers.push_back({{"data", {{"values", rules}}},
                      {"mark", {{"type", "text"}, {"align", "left"}, {"dx", 4}, {"dy", -6}, {"color", "#555"}}},
                      {"encoding", {{"y", {{"field", "y"}, {"type", "quantitative"}}},
                                    {"x", {{"value", 0}}},
                                    {"text", {{"field", "label"}}}}}});
  }
  return {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
          {"title", c.title},
          {"width", 520},
          {"height", 300},
          {"layer", layers}};
}

}  // namespace ub::report
