// The per-kernel-class breakdown of one profiled training step (gpu/step_profiler.hpp): time per
// class (gemm, attention, norm/elementwise, cross_entropy, optimizer, other) and per operation
// label, each with its achieved rate (TFLOPS for GEMMs and attention, GB/s of estimated HBM
// traffic for the rest), so it can be set against the class's ceiling (`mamf` at the GEMM
// shapes, `attention`, `bandwidth`); plus the algorithm the GEMM autotuner kept per shape.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/linear_gemm.hpp"
#include "gpu/step_profiler.hpp"

namespace ub::measure {

struct BreakdownRow {
  std::string cls, label;
  int launches = 0;
  double ms = 0, flop = 0, bytes = 0;
  double tflops() const { return flop > 0 && ms > 0 ? flop / 1e12 / (ms * 1e-3) : 0; }
  double gbps() const { return bytes > 0 && ms > 0 ? bytes / 1e9 / (ms * 1e-3) : 0; }
};

struct Breakdown {
  double step_ms = 0;                 // the profiled step, end to end
  std::vector<BreakdownRow> classes;  // label empty
  std::vector<BreakdownRow> ops;      // by (class, label), in first-seen order
  std::vector<gpu::LinearGemm::Choice> gemms;
  nlohmann::json to_json() const;
  std::string table() const;  // for stderr
};

Breakdown make_breakdown(const std::vector<gpu::StepProfiler::Op>& ops, double step_ms,
                         std::vector<gpu::LinearGemm::Choice> gemms);

}  // namespace ub::measure
