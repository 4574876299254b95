// Decomposing a trace; see trace_decomposition.hpp.
#include "analysis/decompose/trace_decomposition.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <regex.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "base/error.hpp"
#include "base/regex_bounds.hpp"
#include "base/text.hpp"
#include "records/trace/kineto_trace.hpp"

namespace ub::trace {

namespace {

// An extended regular expression, compiled once.
class Pattern {
 public:
  explicit Pattern(const std::string& p) {
    if (const auto why = pattern_too_costly(p)) {
      throw UsageError(fmt::format("--step-name: \"{}\" would cost too much to compile: {}", printable(p.substr(0, 80)), *why));
    }
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

// A name as records and tables carry it: the trace is streamed, not parsed by a JSON library, so a
// name may hold bytes that are not UTF-8, which JSON output cannot; they become U+FFFD.
std::string utf8_name(std::string name) {
  replace_invalid_utf8(name);
  return name;
}

bool ends_with(const std::string& s, const char* tail) {
  const std::string t(tail);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

// How far a kernel may start inside the one before it on its stream: programmatic dependent
// launch lets the next kernel's blocks start while the last blocks of the one before finish.
constexpr double kLaunchOverlapUs = 5.0;

// Every step's split, in time that grows with the trace, not with its steps times its activities:
// the activities are ordered by start once and walked with the steps. Those that started before a
// step are kept ordered by end: the ones ending inside the step are listed to it, the ones running
// past its end are counted by bucket (a long kernel under every step is one count per step, not
// one entry per step), and those starting inside the step are listed. `windows`: sorted by start.
std::vector<StepDecomposition> decompose_steps(const std::vector<StepWindow>& windows, const std::vector<GpuActivity>& acts,
                                               const std::vector<std::string>& names, const std::string& where) {
  std::vector<uint32_t> order(acts.size());
  std::iota(order.begin(), order.end(), 0u);
  // By start, then what tells one event from another on a stream, so that an event written twice
  // stands next to itself (one pass, however many kernels share a start).
  const auto key = [&](uint32_t i) { return std::tuple(acts[i].start, acts[i].stream, acts[i].name, acts[i].end, acts[i].bucket); };
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  // One stream runs one kernel at a time; a kernel may start as the one before it ends
  // (programmatic dependent launch overlaps them by a fraction of a microsecond), but the same
  // kernel twice at the same instant on one stream is one event written twice: a trace merged
  // with itself, or edited.
  for (size_t k = 1; k < order.size(); ++k) {
    const GpuActivity& a = acts[order[k - 1]];
    if (a.bucket != Bucket::memcpy && key(order[k - 1]) == key(order[k])) {
      throw WorkError(fmt::format("{}: kernel {} on stream {} at {:.3f} us is in the trace twice: a trace merged with "
                                  "itself, or edited", where, printable(names[a.name]), a.stream, a.start));
    }
  }
  // Nor does a kernel start far inside the one before it on its stream: more than the launch
  // overlap (a few microseconds) and more than half the shorter of the two is a copy of a kernel
  // moved in time, which would take a share of the step from the kernels beside it.
  std::unordered_map<int32_t, uint32_t> last_on_stream;  // the kernel ending last so far on each stream
  for (const uint32_t i : order) {
    const GpuActivity& b = acts[i];
    if (b.bucket == Bucket::memcpy || b.stream < 0) continue;  // a stream no field names: nothing to hold it to
    const auto [it, first] = last_on_stream.try_emplace(b.stream, i);
    if (first) continue;
    const GpuActivity& a = acts[it->second];
    const double overlap = std::min(a.end, b.end) - b.start;
    if (overlap > std::max(kLaunchOverlapUs, 0.5 * std::min(a.end - a.start, b.end - b.start))) {
      throw WorkError(fmt::format("{}: kernel {} at {:.3f} us starts {:.3f} us before kernel {} (from {:.3f} us) ends on "
                                  "stream {}: one stream runs one kernel at a time; a trace merged or edited", where,
                                  printable(names[b.name]), b.start, overlap, printable(names[a.name]), a.start, b.stream));
    }
    if (b.end > a.end) it->second = i;
  }
  std::set<std::pair<double, uint32_t>> running;  // (end, index) of activities started before the step
  std::array<uint32_t, kBuckets> running_by_bucket{};
  const auto bucket_of = [&](uint32_t i) { return static_cast<size_t>(acts[i].bucket); };
  std::vector<uint32_t> mine;
  std::vector<GpuActivity> overlapping;
  std::vector<StepDecomposition> out;
  size_t next = 0;  // the first activity (in `order`) that starts at or after the current step's start
  for (const StepWindow& w : windows) {
    for (; next < order.size() && acts[order[next]].start < w.start; ++next) {
      running.emplace(acts[order[next]].end, order[next]);
      ++running_by_bucket[bucket_of(order[next])];
    }
    while (!running.empty() && running.begin()->first <= w.start) {
      --running_by_bucket[bucket_of(running.begin()->second)];
      running.erase(running.begin());
    }
    mine.clear();
    std::array<uint32_t, kBuckets> covering = running_by_bucket;
    for (auto it = running.begin(); it != running.end() && it->first < w.end; ++it) {
      mine.push_back(it->second);
      --covering[bucket_of(it->second)];
    }
    for (size_t k = next; k < order.size() && acts[order[k]].start < w.end; ++k) mine.push_back(order[k]);
    std::sort(mine.begin(), mine.end());  // the trace's order: the same sums whatever the walk
    overlapping.clear();
    for (uint32_t i : mine) overlapping.push_back(acts[i]);
    out.push_back(decompose_step(w, overlapping, covering));
  }
  return out;
}

// A numbered step's name with its number read as a number ("ProfilerStep#01", "#+1" and "#1 " are
// "ProfilerStep#1"); none for a name without a number after its last '#'.
std::optional<std::string> numbered_step(const std::string& name) {
  const size_t hash = name.rfind('#');
  if (hash == std::string::npos) return std::nullopt;
  std::string digits = trim(std::string_view(name).substr(hash + 1));
  if (!digits.empty() && digits.front() == '+') digits.erase(0, 1);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
  return name.substr(0, hash + 1) + digits;
}

// Steps follow one another: two that overlap would count the GPU time between them twice, and
// a step hundreds of times its steps' median (an edited `dur`) would make its idle time of
// nothing. Windows sorted by start.
void check_step_windows(const std::vector<StepWindow>& windows, const std::string& path) {
  // A numbered step (the profiler's "ProfilerStep#N") is one step: its number twice is two traces
  // joined, or an edit, and the step would count twice. Names without a number (a user's
  // record_function("train_step") each iteration) repeat by design.
  std::unordered_map<std::string, const StepWindow*> numbered;
  for (const StepWindow& w : windows) {
    const std::optional<std::string> key = numbered_step(w.name);
    if (!key) continue;
    if (const auto [it, first] = numbered.emplace(*key, &w); !first) {
      throw WorkError(fmt::format("{}: step {} is annotated twice (\"{}\" at {:.1f} us, \"{}\" at {:.1f} us): one step's "
                                  "number twice, a trace joined from two or edited", printable(path),
                                  printable(it->second->name), printable(it->second->name), it->second->start,
                                  printable(w.name), w.start));
    }
  }
  for (size_t i = 1; i < windows.size(); ++i) {
    if (windows[i].start < windows[i - 1].end - 1.0) {  // a microsecond of the host clock's rounding
      throw WorkError(fmt::format("{}: steps {} and {} overlap ({:.1f} us): a step starts after the one before it ends",
                                  printable(path), printable(windows[i - 1].name), printable(windows[i].name),
                                  windows[i - 1].end - windows[i].start));
    }
  }
  if (windows.size() < 3) return;
  std::vector<double> lengths;
  for (const StepWindow& w : windows) lengths.push_back(w.end - w.start);
  std::nth_element(lengths.begin(), lengths.begin() + static_cast<std::ptrdiff_t>(lengths.size() / 2), lengths.end());
  const double median = lengths[lengths.size() / 2];
  for (const StepWindow& w : windows) {
    if (median > 0 && w.end - w.start > 100 * median) {
      throw WorkError(fmt::format("{}: step {} lasts {:.3g} ms, {:.0f} times the median of its {} steps: not a step of "
                                  "this run", printable(path), printable(w.name), (w.end - w.start) / 1e3,
                                  (w.end - w.start) / median, windows.size()));
    }
  }
}

// Whether any of `acts` runs inside one of `windows` (sorted by start, none overlapping).
bool any_inside(const std::vector<StepWindow>& windows, const std::vector<GpuActivity>& acts) {
  for (const GpuActivity& a : acts) {
    const auto after = std::upper_bound(windows.begin(), windows.end(), a.start,
                                        [](double t, const StepWindow& w) { return t < w.start; });
    if (after != windows.begin() && std::prev(after)->end > a.start) return true;
    if (after != windows.end() && after->start < a.end) return true;
  }
  return false;
}

// The GPU runs a step's work inside the host's window of that step (the host launches it, then
// waits for it: the loss read back). A host step that starts after its GPU-side twin starts, or
// ends before the twin ends (beyond the clocks' few microseconds of alignment), is on a clock
// shifted or scaled against the kernels, and its idle share would be wrong; so are host steps of
// which none pairs with a GPU-side one (renumbered, or of another run). Twins pair by name, a
// step's number read as a number. How many steps disagree, and by how much at most.
struct ClockDisagreement {
  size_t steps = 0, paired = 0, unpaired = 0;  // unpaired: GPU-side steps no host step is named as
  double most_us = 0;
};
ClockDisagreement host_steps_off_their_gpu_work(const std::vector<StepWindow>& host, const std::vector<StepWindow>& gpu) {
  constexpr double kClockAlignmentUs = 5;
  // A name without a number may repeat (record_function("train_step") each iteration): its n-th
  // host step pairs with its n-th GPU-side one. Both lists are in order of start.
  const auto keys = [](const std::vector<StepWindow>& steps) {
    std::vector<std::string> out;
    std::unordered_map<std::string, size_t> seen;
    for (const StepWindow& w : steps) {
      const std::optional<std::string> numbered = numbered_step(w.name);
      out.push_back(numbered ? *numbered : fmt::format("{}\n{}", w.name, seen[w.name]++));
    }
    return out;
  };
  const std::vector<std::string> host_keys = keys(host), gpu_keys = keys(gpu);
  std::unordered_map<std::string, const StepWindow*> by_key;
  for (size_t i = 0; i < host.size(); ++i) by_key.emplace(host_keys[i], &host[i]);
  ClockDisagreement d;
  for (size_t i = 0; i < gpu.size(); ++i) {
    const StepWindow& w = gpu[i];
    const auto it = by_key.find(gpu_keys[i]);
    if (it == by_key.end()) {
      ++d.unpaired;
      continue;
    }
    ++d.paired;
    const double off = std::max(it->second->start - w.start, w.end - it->second->end);
    if (off <= kClockAlignmentUs) continue;
    ++d.steps;
    d.most_us = std::max(d.most_us, off);
  }
  return d;
}

// --steps N cuts the timeline into N parts: more parts than the device has activities would be
// parts holding nothing (and N = 1e9 parts, memory for a billion steps): refused, with the bound.
void check_parts(int n, size_t activities, int64_t device, const std::string& path) {
  if (static_cast<size_t>(n) > activities) {
    throw UsageError(fmt::format("--steps {}: more steps than the {} GPU activities of device {} in {}: give at most {}",
                                 n, activities, device, path, activities));
  }
}

}  // namespace

const StepDecomposition& TraceDecomposition::median_step() const {
  // A step in which the GPU ran nothing (a window the profiler closed before the work) is no step
  // to stand for the others: the median is of the steps with GPU activity, where there are any.
  std::vector<const StepDecomposition*> order;
  for (const auto& s : steps) {
    if (s.activities > 0) order.push_back(&s);
  }
  if (order.empty()) {
    for (const auto& s : steps) order.push_back(&s);
  }
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->step_us < b->step_us; });
  return *order[(order.size() - 1) / 2];
}

std::vector<TraceDecomposition> decompose_trace(const std::string& path, KernelClasses& classes,
                                                const DecomposeOptions& options) {
  const Pattern step_name(options.step_pattern);
  std::unordered_map<std::string, uint32_t> ids;
  std::vector<std::string> names;
  std::vector<Bucket> buckets;
  // Kernels no rule names, per device: each GPU's own, for its table.
  std::map<int64_t, std::map<uint32_t, std::pair<double, size_t>>> others;
  std::map<int64_t, std::vector<GpuActivity>> by_device;
  std::vector<StepWindow> cpu_steps, gpu_steps;
  const TraceInfo info = read_kineto_trace(path, [&](const TraceEvent& e) {
    if (e.kind == EventKind::cpu_annotation || e.kind == EventKind::gpu_annotation) {
      if (step_name.matches(e.name)) {
        (e.kind == EventKind::cpu_annotation ? cpu_steps : gpu_steps).push_back({utf8_name(e.name), e.ts, e.ts + e.dur});
      }
      return;
    }
    GpuActivity a;
    a.start = e.ts;
    a.end = e.ts + e.dur;
    if (e.kind == EventKind::kernel) {
      auto [it, fresh] = ids.try_emplace(e.name, static_cast<uint32_t>(names.size()));
      if (fresh) {
        names.push_back(utf8_name(e.name));
        buckets.push_back(classes.classify(e.name));
      }
      a.name = it->second;
      a.bucket = buckets[a.name];
      if (a.bucket == Bucket::other) {
        auto& x = others[e.device < 0 ? 0 : e.device][a.name];
        x.first += e.dur, ++x.second;
      }
    } else {
      a.bucket = Bucket::memcpy;
    }
    a.stream = static_cast<int32_t>(std::clamp<int64_t>(e.stream, INT32_MIN, INT32_MAX));
    by_device[e.device < 0 ? 0 : e.device].push_back(a);
  });
  if (info.events == 0) {  // `{}`, `[]`, a JSON file of another kind: no traceEvents at all
    throw UsageError(fmt::format("{}: not a torch.profiler trace (no events in traceEvents)", path));
  }
  if (by_device.empty()) {
    throw WorkError(fmt::format("{}: no GPU kernels in the trace (was the profiler's CUDA activity on: "
                                "torch.profiler.ProfilerActivity.CUDA?)", path));
  }

  std::vector<TraceDecomposition> out;
  for (auto& [device, acts] : by_device) {
    TraceDecomposition d;
    d.path = path;
    d.device = device;
    d.rank = info.rank, d.world_size = info.world_size;
    if (info.trace_name == kEngineTraceName) d.source = kEngineSource;
    d.events = info.events;
    d.bytes = info.bytes;
    d.activity.count = acts.size();
    d.activity.first = acts.front().start, d.activity.last = acts.front().end;
    for (const GpuActivity& a : acts) {
      d.activity.first = std::min(d.activity.first, a.start);
      d.activity.last = std::max(d.activity.last, a.end);
      d.activity.busy += a.end - a.start;
    }
    for (const auto& [name, time] : others[device]) d.unclassified.push_back({names[name], time.first, time.second});
    std::sort(d.unclassified.begin(), d.unclassified.end(), [](const NameTime& a, const NameTime& b) { return a.us > b.us; });
    if (const auto it = info.device_names.find(device); it != info.device_names.end()) d.gpu = it->second;
    std::vector<StepWindow> windows;
    if (options.steps && (!cpu_steps.empty() || !gpu_steps.empty())) {
      throw UsageError(fmt::format("--steps {}: {} has {} step annotations matching \"{}\", which mark its steps; "
                                   "--steps cuts a trace that has none (give --step-name for other annotations)",
                                   *options.steps, printable(path), cpu_steps.size() + gpu_steps.size(),
                                   printable(options.step_pattern)));
    }
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
      check_parts(n, acts.size(), device, path);
      for (int i = 0; i < n; ++i) {
        windows.push_back({fmt::format("part {}", i + 1), first + (last - first) * i / n,
                           first + (last - first) * (i + 1) / n});
      }
      d.steps_from = fmt::format("the GPU timeline cut into {} equal parts (--steps)", n);
    } else {
      const std::string not_complete =
          info.annotations_not_complete == 0
              ? std::string()
              : fmt::format(" ({} annotation event(s) are begin/end pairs or instants, which are not read as steps)",
                            info.annotations_not_complete);
      throw WorkError(fmt::format("{}: no step annotations matching \"{}\"{}: give --step-name for the annotations "
                                  "that mark a step, or --steps N to cut the GPU timeline into N steps",
                                  path, options.step_pattern, not_complete));
    }
    // A step annotation of no length (a profiler closed at once, an edited `dur`) holds nothing: left
    // out, and said with the steps (after where the steps came from, whichever side that is).
    std::string said;
    std::vector<std::string> empty;
    for (const StepWindow& w : windows) {
      if (!(w.end > w.start)) empty.push_back(printable(w.name));
    }
    if (!empty.empty()) {
      std::erase_if(windows, [](const StepWindow& w) { return !(w.end > w.start); });
      said += fmt::format("; {} of no length left out ({})", empty.size(),
                                  fmt::join(empty.begin(), empty.begin() + std::min<std::ptrdiff_t>(3, std::ssize(empty)), ", "));
    }
    if (info.annotations_not_complete > 0) {
      said += fmt::format("; {} annotation event(s) not complete (\"ph\" other than \"X\": a begin/end pair, an "
                                  "instant) left out", info.annotations_not_complete);
    }
    if (info.not_objects > 0) {
      said += fmt::format("; {} element(s) of traceEvents that are not events (not objects) left out",
                                  info.not_objects);
    }
    if (windows.empty()) throw WorkError(fmt::format("{}: every step annotation is empty", path));
    const auto by_start = [](const StepWindow& a, const StepWindow& b) { return a.start < b.start; };
    std::sort(windows.begin(), windows.end(), by_start);
    check_step_windows(windows, path);
    // Steps that hold none of the GPU's work (host annotations an hour off the GPU's clock) would
    // be a step of 100% idle, and host steps starting after the GPU ran their work (shifted by a
    // fraction of a step) a wrong idle share: the GPU side's annotations where the trace has them,
    // else refused (none inside) or said (shifted).
    const bool from_host = !cpu_steps.empty();
    std::vector<StepWindow> gpu_side = gpu_steps;
    std::erase_if(gpu_side, [](const StepWindow& w) { return !(w.end > w.start); });
    std::sort(gpu_side.begin(), gpu_side.end(), by_start);
    const bool none_inside = !any_inside(windows, acts);
    const ClockDisagreement shifted = from_host ? host_steps_off_their_gpu_work(windows, gpu_side) : ClockDisagreement{};
    // A GPU-side step is the GPU's span of a host annotation: one no host step is named as is a
    // host step renamed, renumbered or missing, and its host window is not the step's.
    const bool unpaired = from_host && shifted.unpaired > 0;
    if (none_inside || shifted.steps > 0 || unpaired) {
      if (!from_host || gpu_side.empty() || !any_inside(gpu_side, acts)) {
        throw WorkError(fmt::format("{}: none of the GPU work of device {} lies inside any of its {} steps: the steps and "
                                    "the kernels are on different clocks, or of different runs", printable(path), device,
                                    windows.size()));
      }
      check_step_windows(gpu_side, path);
      windows = std::move(gpu_side);
      d.steps_from =
          none_inside ? fmt::format("{} annotations matching \"{}\" (GPU side: the host side's hold none of the GPU's "
                                    "work)", windows.size(), options.step_pattern)
          : unpaired  ? fmt::format("{} annotations matching \"{}\" (GPU side: {} of them have no host-side step of the "
                                    "same name: renumbered, missing, or of another run)", windows.size(),
                                    options.step_pattern, shifted.unpaired)
                      : fmt::format("{} annotations matching \"{}\" (GPU side: {} host-side step(s) do not hold the "
                                    "GPU's work of the step, off by up to {:.0f} us: the host clock is shifted or scaled "
                                    "against the GPU's)", windows.size(), options.step_pattern, shifted.steps,
                                    shifted.most_us);
    }
    d.steps_from += said;
    // GPU work in no step (before the first, between two, after the last) is in no step's split:
    // counted and said, never left out unsaid.
    size_t outside = 0;
    double outside_us = 0;
    for (const GpuActivity& a : acts) {
      // The steps are sorted and apart: the last to start before the activity ends is the one it
      // may overlap (one before it ends before that one starts).
      const auto after = std::upper_bound(windows.begin(), windows.end(), a.end,
                                          [](double t, const StepWindow& w) { return t <= w.start; });
      const bool in_a_step = after != windows.begin() && std::prev(after)->end > a.start;
      if (!in_a_step) ++outside, outside_us += a.end - a.start;
    }
    if (outside > 0) {
      d.steps_from += fmt::format("; {} GPU activit{} ({:.2f} ms) in no step, left out", outside,
                                  outside == 1 ? "y" : "ies", outside_us / 1e3);
    }
    d.steps = decompose_steps(windows, acts, names, fmt::format("{} (device {})", printable(path), device));
    if (d.steps.empty()) throw WorkError(fmt::format("{}: every step annotation is empty", path));
    out.push_back(std::move(d));
  }
  return out;
}

namespace {

bool same_bytes(const std::string& a, const std::string& b) {
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  if (!fa || !fb) return false;
  std::vector<char> ba(1 << 16), bb(1 << 16);
  while (fa && fb) {
    fa.read(ba.data(), static_cast<std::streamsize>(ba.size()));
    fb.read(bb.data(), static_cast<std::streamsize>(bb.size()));
    if (fa.gcount() != fb.gcount() || !std::equal(ba.begin(), ba.begin() + fa.gcount(), bb.begin())) return false;
  }
  return !fa && !fb;
}

// Each trace is one GPU's (one rank's) measurement: the same file named twice, or a copy of one
// beside it, would be counted as two.
void refuse_repeated(const std::vector<std::string>& files) {
  std::map<uintmax_t, std::vector<size_t>> by_size;
  for (size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(files[i], ec)) continue;  // a pipe or device is read as it comes
    const uintmax_t size = std::filesystem::file_size(files[i], ec);
    if (!ec) by_size[size].push_back(i);
  }
  for (const auto& [size, same] : by_size) {
    for (size_t x = 0; x < same.size(); ++x) {
      for (size_t y = x + 1; y < same.size(); ++y) {
        const std::string &a = files[same[x]], &b = files[same[y]];
        std::error_code ec;
        if (std::filesystem::equivalent(a, b, ec)) {
          throw UsageError(fmt::format("{}: the same file as {}: one trace named twice", b, a));
        }
        if (same_bytes(a, b)) {
          throw UsageError(fmt::format("{}: the same bytes as {}: one measurement, not two (a copy of a rank's trace "
                                       "is not another rank's)", b, a));
        }
      }
    }
  }
}

}  // namespace

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
  refuse_repeated(out);
  return out;
}

}  // namespace ub::trace
