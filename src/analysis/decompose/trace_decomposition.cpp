// Decomposing a trace; see trace_decomposition.hpp.
#include "analysis/decompose/trace_decomposition.hpp"

#include <fmt/format.h>
#include <regex.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "base/error.hpp"
#include "records/trace/kineto_trace.hpp"

namespace ub::trace {

namespace {

// An extended regular expression, compiled once.
class Pattern {
 public:
  explicit Pattern(const std::string& p) {
    if (regcomp(&re_, p.c_str(), REG_EXTENDED | REG_NOSUB) != 0) {
      throw UsageError(fmt::format("--step-name: \"{}\" is not an extended regular expression", p));
    }
  }
  ~Pattern() { regfree(&re_); }
  Pattern(const Pattern&) = delete;
  Pattern& operator=(const Pattern&) = delete;
  bool matches(const std::string& s) const { return regexec(&re_, s.c_str(), 0, nullptr, 0) == 0; }

 private:
  regex_t re_{};
};

bool ends_with(const std::string& s, const char* tail) {
  const std::string t(tail);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

}  // namespace

const StepDecomposition& TraceDecomposition::median_step() const {
  std::vector<const StepDecomposition*> order;
  for (const auto& s : steps) order.push_back(&s);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->step_us < b->step_us; });
  return *order[(order.size() - 1) / 2];
}

std::vector<TraceDecomposition> decompose_trace(const std::string& path, KernelClasses& classes,
                                                const DecomposeOptions& options) {
  const Pattern step_name(options.step_pattern);
  std::unordered_map<std::string, uint32_t> ids;
  std::vector<std::string> names;
  std::vector<Bucket> buckets;
  std::vector<double> name_us;
  std::vector<size_t> name_count;
  std::map<int64_t, std::vector<GpuActivity>> by_device;
  std::vector<StepWindow> cpu_steps, gpu_steps;
  const TraceInfo info = read_kineto_trace(path, [&](const TraceEvent& e) {
    if (e.kind == EventKind::cpu_annotation || e.kind == EventKind::gpu_annotation) {
      if (step_name.matches(e.name)) {
        (e.kind == EventKind::cpu_annotation ? cpu_steps : gpu_steps).push_back({e.name, e.ts, e.ts + e.dur});
      }
      return;
    }
    GpuActivity a;
    a.start = e.ts;
    a.end = e.ts + e.dur;
    if (e.kind == EventKind::kernel) {
      auto [it, fresh] = ids.try_emplace(e.name, static_cast<uint32_t>(names.size()));
      if (fresh) {
        names.push_back(e.name);
        buckets.push_back(classes.classify(e.name));
        name_us.push_back(0);
        name_count.push_back(0);
      }
      a.name = it->second;
      a.bucket = buckets[a.name];
      name_us[a.name] += e.dur;
      ++name_count[a.name];
    } else {
      a.bucket = Bucket::memcpy;
    }
    by_device[e.device < 0 ? 0 : e.device].push_back(a);
  });
  if (by_device.empty()) {
    throw WorkError(fmt::format("{}: no GPU kernels in the trace (was the profiler's CUDA activity on: "
                                "torch.profiler.ProfilerActivity.CUDA?)", path));
  }
  std::vector<NameTime> unclassified;
  for (size_t i = 0; i < names.size(); ++i) {
    if (buckets[i] == Bucket::other) unclassified.push_back({names[i], name_us[i], name_count[i]});
  }
  std::sort(unclassified.begin(), unclassified.end(), [](const NameTime& a, const NameTime& b) { return a.us > b.us; });

  std::vector<TraceDecomposition> out;
  for (auto& [device, acts] : by_device) {
    TraceDecomposition d;
    d.path = path;
    d.device = device;
    d.events = info.events;
    d.bytes = info.bytes;
    d.unclassified = unclassified;
    if (const auto it = info.device_names.find(device); it != info.device_names.end()) d.gpu = it->second;
    std::vector<StepWindow> windows;
    if (!cpu_steps.empty()) {
      windows = cpu_steps;
      d.steps_from = fmt::format("{} annotations matching \"{}\" (host side)", cpu_steps.size(), options.step_pattern);
    } else if (!gpu_steps.empty()) {
      windows = gpu_steps;
      d.steps_from = fmt::format("{} annotations matching \"{}\" (GPU side)", gpu_steps.size(), options.step_pattern);
    } else if (options.steps) {
      double first = acts.front().start, last = acts.front().end;
      for (const GpuActivity& a : acts) first = std::min(first, a.start), last = std::max(last, a.end);
      const int n = *options.steps;
      for (int i = 0; i < n; ++i) {
        windows.push_back({fmt::format("part {} of {}", i + 1, n), first + (last - first) * i / n,
                           first + (last - first) * (i + 1) / n});
      }
      d.steps_from = fmt::format("the GPU timeline cut into {} equal parts (--steps)", n);
    } else {
      throw WorkError(fmt::format("{}: no step annotations matching \"{}\": give --step-name for the annotations "
                                  "that mark a step, or --steps N to cut the GPU timeline into N steps",
                                  path, options.step_pattern));
    }
    std::sort(windows.begin(), windows.end(), [](const StepWindow& a, const StepWindow& b) { return a.start < b.start; });
    for (const StepWindow& w : windows) {
      if (w.end > w.start) d.steps.push_back(decompose_step(w, acts));
    }
    if (d.steps.empty()) throw WorkError(fmt::format("{}: every step annotation is empty", path));
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<std::string> trace_files(const std::vector<std::string>& inputs) {
  std::vector<std::string> out;
  for (const std::string& in : inputs) {
    if (!std::filesystem::exists(in)) throw UsageError(fmt::format("{}: no such file or folder", in));
    if (!std::filesystem::is_directory(in)) {
      out.push_back(in);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& e : std::filesystem::directory_iterator(in)) {
      const std::string p = e.path().string();
      if (e.is_regular_file() && (ends_with(p, ".json") || ends_with(p, ".json.gz"))) found.push_back(p);
    }
    if (found.empty()) throw UsageError(fmt::format("{}: a folder without traces (*.json, *.json.gz)", in));
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace ub::trace
