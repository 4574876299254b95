// A measurement taken again, for tests that need two measurements where the fixtures hold one:
// records whose every time is `scale` times as long and every rate `scale` times lower, so each
// figure that is said twice (a TFLOPS beside its time, a bucket's share) still agrees with itself,
// and no point is the first file's to the last bit (the same measurement, refused).
#pragma once

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>

namespace ub_test {

enum class Figure { other, time, rate };

// A key's figure: a time (…_ms, ms, kernel_ms), a rate (TFLOPS, GB/s, MFU, a share of a ceiling).
inline Figure figure_of(const std::string& key) {
  const auto ends = [&](const std::string& tail) {
    return key.size() >= tail.size() && key.compare(key.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (key == "ms" || ends("_ms")) return Figure::time;
  if (key == "tflops" || ends("_tflops") || key == "gbps" || ends("_gbps") || key == "mfu" || key == "hfu" ||
      key == "of_ceiling") {
    return Figure::rate;
  }
  return Figure::other;
}

// `v` (a record, or a part of one under `key`) measured again `scale` times slower.
inline void measure_again(nlohmann::json& v, double scale, Figure inherited = Figure::other) {
  if (v.is_object()) {
    for (auto& [k, child] : v.items()) {
      const Figure f = figure_of(k);
      // The statistics of a time or a rate ({median, mean, min, ...}) are that figure; their counts stay.
      const Figure g = f != Figure::other ? f : (k == "n" || k == "cv" || k == "samples" ? Figure::other : inherited);
      measure_again(child, scale, child.is_object() ? f : g);
    }
  } else if (v.is_array()) {
    for (auto& child : v) measure_again(child, scale, inherited);
  } else if (v.is_number_float() || (v.is_number() && inherited != Figure::other)) {
    if (inherited == Figure::time) v = v.get<double>() * scale;
    if (inherited == Figure::rate) v = v.get<double>() / scale;
  }
}

// Every line of a records file measured again.
inline std::string measured_again(const std::string& records, double scale) {
  std::istringstream in(records);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json r = nlohmann::json::parse(line);
    if (r.value("type", "") != "context") measure_again(r, scale);
    out += r.dump() + "\n";
  }
  return out;
}

}  // namespace ub_test
