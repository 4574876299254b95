// The split of one step; see step_decomposition.hpp.
#include "analysis/decompose/step_decomposition.hpp"

#include <algorithm>
#include <utility>

namespace ub::trace {

namespace {

using Intervals = std::vector<std::pair<double, double>>;

// Sorted, disjoint intervals covering the same time as `v`.
Intervals merged(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& [s, e] : v) {
    if (!out.empty() && s <= out.back().second) out.back().second = std::max(out.back().second, e);
    else out.emplace_back(s, e);
  }
  return out;
}

double length(const Intervals& v) {
  double t = 0;
  for (const auto& [s, e] : v) t += e - s;
  return t;
}

// The time of `a` (disjoint, sorted) that `b` (disjoint, sorted) also covers.
double overlap(const Intervals& a, const Intervals& b) {
  double t = 0;
  size_t j = 0;
  for (const auto& [s, e] : a) {
    while (j < b.size() && b[j].second <= s) ++j;
    for (size_t k = j; k < b.size() && b[k].first < e; ++k) t += std::min(e, b[k].second) - std::max(s, b[k].first);
  }
  return t;
}

Intervals joined(const Intervals& a, const Intervals& b) {
  Intervals all = a;
  all.insert(all.end(), b.begin(), b.end());
  return merged(std::move(all));
}

}  // namespace

StepDecomposition decompose_step(const StepWindow& w, const std::vector<GpuActivity>& acts,
                                 const std::array<uint32_t, kBuckets>& covering) {
  StepDecomposition d;
  d.name = w.name;
  d.step_us = std::max(0.0, w.end - w.start);
  Intervals compute, copies, comm;
  std::array<double, kBuckets>& kernel_us = d.kernel_us;
  // `times` activities of `bucket` running over [s, e) of the window.
  const auto add = [&](Bucket bucket, double s, double e, uint32_t times) {
    d.activities += times;
    kernel_us[static_cast<size_t>(bucket)] += (e - s) * times;
    if (is_compute(bucket)) {
      compute.emplace_back(s, e);
      d.compute_kernel_us += (e - s) * times;
    } else if (bucket == Bucket::communication) {
      comm.emplace_back(s, e);
    } else {
      copies.emplace_back(s, e);
    }
  };
  for (const GpuActivity& a : acts) {
    const double s = std::max(a.start, w.start), e = std::min(a.end, w.end);
    if (e > s) add(a.bucket, s, e, 1);
  }
  if (w.end > w.start) {
    for (Bucket b : kAllBuckets) {
      if (covering[static_cast<size_t>(b)] > 0) add(b, w.start, w.end, covering[static_cast<size_t>(b)]);
    }
  }
  compute = merged(std::move(compute));
  copies = merged(std::move(copies));
  comm = merged(std::move(comm));
  const double busy = length(compute);
  // Kernels of several streams at once: each bucket keeps its share of the busy time.
  const double scale = d.compute_kernel_us > 0 ? busy / d.compute_kernel_us : 0;
  for (Bucket b : kAllBuckets) {
    if (is_compute(b)) d.us[static_cast<size_t>(b)] = kernel_us[static_cast<size_t>(b)] * scale;
  }
  const double copies_exposed = length(copies) - overlap(copies, compute);
  const Intervals compute_or_copies = joined(compute, copies);
  d.communication_us = length(comm);
  d.communication_overlapped_us = overlap(comm, compute);
  const double comm_exposed = d.communication_us - overlap(comm, compute_or_copies);
  d.us[static_cast<size_t>(Bucket::memcpy)] = copies_exposed;
  d.us[static_cast<size_t>(Bucket::communication)] = comm_exposed;
  const double covered = busy + copies_exposed + comm_exposed;
  d.us[static_cast<size_t>(Bucket::idle)] = std::max(0.0, d.step_us - covered);
  return d;
}

}  // namespace ub::trace
