// Our engine's profile as a breakdown and a decomposition; see engine_decomposition.hpp.
#include "measure/engine_decomposition.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "base/error.hpp"
#include "measure/train_breakdown.hpp"

namespace ub::measure {

using trace::Bucket;

Bucket bucket_of_class(const std::string& cls) {
  if (cls == "gemm") return Bucket::gemm;
  if (cls == "attention") return Bucket::attention;
  if (cls == "norm/elementwise") return Bucket::elementwise;
  if (cls == "cross_entropy") return Bucket::loss;
  if (cls == "optimizer") return Bucket::optimizer;
  if (cls == "communication") return Bucket::communication;
  if (cls == "moe") return Bucket::routing;
  return Bucket::other;
}

EngineProfile analyse_profile(gpu::StepProfiler::Profile p, trace::KernelClasses& classes, const std::string& gpu_name,
                              int device, std::vector<GemmChoice> gemms) {
  if (p.steps.empty()) throw WorkError("profile: no step was profiled");
  const uint64_t base = p.steps.front().start;
  const auto us = [base](uint64_t ns) { return static_cast<double>(static_cast<int64_t>(ns - base)) / 1e3; };

  // Every record on one timeline, in its bucket; kernels outside any operation by their names.
  std::vector<trace::GpuActivity> acts;
  acts.reserve(p.log.records.size());
  std::vector<Bucket> by_name(p.log.names.size(), Bucket::other);
  std::vector<char> named(p.log.names.size(), 0);
  std::vector<double> untagged_us(p.log.names.size(), 0);
  std::vector<size_t> untagged_count(p.log.names.size(), 0);
  for (const gpu::GpuActivityRecord& r : p.log.records) {
    trace::GpuActivity a;
    a.start = us(r.start), a.end = us(r.end);
    if (r.kind != gpu::GpuActivityRecord::Kind::kernel) {
      a.bucket = Bucket::memcpy;
    } else if (r.operation > 0 && r.operation <= p.ops.size() && p.ops[r.operation - 1].cls != "moe") {
      a.bucket = bucket_of_class(p.ops[r.operation - 1].cls);
      a.name = r.name;
    } else {  // outside any operation, or in an MoE layer's (its GEMMs and its routing, told by name)
      if (!named[r.name]) by_name[r.name] = classes.classify(p.log.names[r.name]), named[r.name] = 1;
      a.bucket = by_name[r.name];
      a.name = r.name;
      untagged_us[r.name] += a.end - a.start;
      untagged_count[r.name] += 1;
    }
    acts.push_back(a);
  }

  EngineProfile e;
  trace::TraceDecomposition& d = e.decomposition;
  d.path = "upgradebench engine";
  d.source = kEngineSource;
  d.gpu = gpu_name;
  d.device = device;
  d.events = p.log.records.size();
  d.steps_from = fmt::format("{} profiled step{} (CUPTI activity records; the stream synchronised around each)",
                             p.steps.size(), p.steps.size() == 1 ? "" : "s");
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const trace::StepWindow w{fmt::format("profiled step {}", i), us(p.steps[i].start), us(p.steps[i].end)};
    d.steps.push_back(trace::decompose_step(w, acts));
    if (d.steps.back().activities == 0) throw WorkError(fmt::format("profile: {} holds no kernel", w.name));
  }
  for (size_t n = 0; n < p.log.names.size(); ++n) {
    if (untagged_count[n] && by_name[n] == Bucket::other) {
      d.unclassified.push_back({p.log.names[n], untagged_us[n], untagged_count[n]});
    }
  }
  std::sort(d.unclassified.begin(), d.unclassified.end(), [](const auto& a, const auto& b) { return a.us > b.us; });

  // The median step's operations: the breakdown, and the work of each bucket.
  const trace::StepDecomposition& median = d.median_step();
  const auto median_index = static_cast<int>(&median - d.steps.data());
  std::vector<gpu::StepProfiler::Op> ops;
  for (const auto& op : p.ops) {
    if (op.step != median_index) continue;
    ops.push_back(op);
    // An MoE layer's FLOPs are its GEMMs' (router, experts), its bytes its routing's.
    const bool moe = op.cls == "moe";
    e.work.flop[static_cast<size_t>(moe ? Bucket::gemm : bucket_of_class(op.cls))] += op.flop;
    e.work.bytes[static_cast<size_t>(bucket_of_class(op.cls))] += op.bytes;
  }
  e.breakdown = make_breakdown(ops, median.step_us / 1e3, std::move(gemms));
  e.breakdown.device = device;
  return e;
}

}  // namespace ub::measure
