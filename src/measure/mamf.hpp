// The matmul ceiling (MAMF, maximum achievable matmul FLOPS): a superset of mamf-finder.py. A
// point is one shape: every one of cuBLASLt's top-K heuristic algorithms is checked against a
// double-precision reference on sampled outputs, the valid ones screened (a few samples each) and
// the fastest timed under the benchmark's policy, with an L2 flush and a re-randomised output
// before each sample, as mamf-finder.py does; clocks, power and throttle state are sampled
// throughout. `search` finds the ceiling without the full grid: a coarse sub-grid (every other
// size), then hill-climbing from the best shapes to their grid neighbours, each shape looked at
// quickly (screening only), then the three finalists timed in full. Listed shapes (a training
// step's products, --shapes-of) are timed one by one, each with how often the step runs it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <vector>

#include "measure/driver.hpp"
#include "records/mamf_result.hpp"

namespace ub::gpu {
class CublasLt;
class DeviceBuffer;
class L2Flusher;
}  // namespace ub::gpu

namespace ub::measure {

class MamfBenchmark : public Benchmark {
 public:
  MamfBenchmark(const MamfConfig& config, DeviceRun& run);
  ~MamfBenchmark() override;

  bool next() override;
  std::string label() const override;
  std::unique_ptr<Point> prepare(cudaStream_t stream) override;
  std::string failed(const WorkError& error, bool out_of_memory) override;
  void warm_up(Point& first, cudaStream_t stream) override;  // on the largest shape, before the first
  void finish() override;                                    // the mamf_summary record

  const MamfOutcome& outcome() const { return outcome_; }

 private:
  friend class MamfPoint;
  using Lattice = std::tuple<size_t, size_t, size_t>;  // indices into the m, n, k sizes
  struct Current {
    Lattice at;
    bool quick = false;
  };
  MamfShape shape_at(const Lattice& p) const;
  void measured(const MamfShape& s);  // a shape's result, for the search and the outcome
  std::string progress_line(const MamfShape& s);  // mamf-finder.py's per-shape line
  std::vector<Lattice> best(size_t count) const;
  bool plan_search_step();            // refills the queue; false when the search is over

  MamfConfig cfg_;
  DeviceRun& run_;
  std::unique_ptr<gpu::CublasLt> lt_;
  std::unique_ptr<gpu::L2Flusher> flusher_;
  std::unique_ptr<gpu::DeviceBuffer> workspace_;
  std::vector<Current> queue_;  // the points still to measure, next at the back
  Current current_;
  std::map<Lattice, double> seen_;  // search: quick median TFLOPS per shape looked at
  std::set<Lattice> expanded_;
  bool finalists_queued_ = false;
  std::chrono::steady_clock::time_point start_;  // after the warm-up: elapsed and the search budget
  MamfOutcome outcome_;
  int index_ = 0;
};

}  // namespace ub::measure
