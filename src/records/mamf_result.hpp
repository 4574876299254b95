// The outcome of a matmul-ceiling search as plain data, and what is derived from it: the best
// shape by mean, median and max TFLOPS, the arithmetic and geometric means across shapes,
// mamf-finder.py's footer, and the summary record. No CUDA here: tested on any machine.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "records/mamf_records.hpp"

namespace ub {

struct MamfOutcome {
  std::vector<MamfShape> shapes;  // every shape measured in full
  int shapes_screened = 0;        // search mode: shapes looked at with quick timing
  double elapsed_s = 0;
  bool interrupted = false;

  enum class By { mean, median, max };
  std::optional<MamfShape> best(By by) const;
  std::optional<double> arithmetic_mean(By by) const;
  std::optional<double> geometric_mean(By by) const;

  // Listed shapes of a training step: their FLOPs, each times its count, over the time the step
  // spends in them at each shape's median; none when a listed shape failed or none is listed.
  std::optional<double> step_tflops() const;

  // "Tried N shapes => the best outcomes were:" then mean / median / max lines (mamf-finder.py's form).
  std::string footer() const;
  MamfSummary summary(int device) const;
};

// A shape's TFLOPS by `by`.
double tflops_by(const MamfShape& s, MamfOutcome::By by);

}  // namespace ub
