// The outcome of a matmul-ceiling search as plain data, and what is derived from it: the best
// shape by mean, median and max TFLOPS, the arithmetic and geometric means across shapes, the
// peer mamf-finder.py's footer, and the summary record. No CUDA here: tested on any machine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ub {

struct MamfShape {
  int device = 0;
  int64_t m = 0, n = 0, k = 0;
  double mean_tflops = 0, median_tflops = 0, max_tflops = 0;
  bool ok = false;
  std::string error;  // why the shape has no timing (validation failed, unsupported shape)

  std::string shape() const;  // "2048x2048x13312"
};

struct MamfOutcome {
  std::vector<MamfShape> shapes;  // every shape measured in full
  int shapes_screened = 0;        // search mode: shapes looked at with quick timing
  double elapsed_s = 0;
  bool interrupted = false;

  enum class By { mean, median, max };
  std::optional<MamfShape> best(By by) const;
  std::optional<double> arithmetic_mean(By by) const;
  std::optional<double> geometric_mean(By by) const;

  // "Tried N shapes => the best outcomes were:" then mean / median / max lines (peer format).
  std::string footer() const;
  nlohmann::json summary_json() const;
};

}  // namespace ub
