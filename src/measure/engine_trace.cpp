// The Chrome trace of our engine's profile; see engine_trace.hpp.
#include "measure/engine_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "records/trace/kineto_trace.hpp"

namespace ub::measure {

using nlohmann::json;

void write_chrome_trace(const gpu::StepProfiler::Profile& p, const std::string& gpu_name, int device,
                        const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "w"), &std::fclose);
  if (!f) throw WorkError(fmt::format("--trace-out {}: cannot write there", path));
  // Microseconds from the first step's start (absolute nanoseconds would lose their last digits).
  const uint64_t base = p.steps.empty() ? 0 : p.steps.front().start;
  const auto us = [base](uint64_t ns) { return static_cast<double>(static_cast<int64_t>(ns - base)) / 1e3; };
  bool first = true;
  const auto event = [&](const json& e) {
    std::fputs(first ? "\n  " : ",\n  ", f.get());
    std::fputs(e.dump(-1, ' ', false, json::error_handler_t::replace).c_str(), f.get());
    first = false;
  };
  const json header = {{"schemaVersion", 1}, {"deviceProperties", json::array({{{"id", device}, {"name", gpu_name}}})},
                       {"traceName", trace::kEngineTraceName}};
  std::string head = header.dump();
  head.pop_back();  // the closing brace: traceEvents follow
  std::fputs((head + ",\n\"traceEvents\": [").c_str(), f.get());
  event({{"name", "process_name"}, {"ph", "M"}, {"pid", device}, {"tid", 0}, {"args", {{"name", fmt::format("GPU {}", device)}}}});
  for (size_t i = 0; i < p.steps.size(); ++i) {
    event({{"ph", "X"}, {"cat", "user_annotation"}, {"name", fmt::format("ProfilerStep#{}", i)}, {"pid", "host"},
           {"tid", 0}, {"ts", us(p.steps[i].start)}, {"dur", us(p.steps[i].end) - us(p.steps[i].start)}});
  }
  // Each operation's span on the GPU: from its first kernel's start to its last one's end.
  std::vector<std::pair<uint64_t, uint64_t>> span(p.ops.size(), {std::numeric_limits<uint64_t>::max(), 0});
  std::vector<uint32_t> stream_of(p.ops.size(), 0);
  for (const gpu::GpuActivityRecord& r : p.log.records) {
    static constexpr const char* kCat[] = {"kernel", "gpu_memcpy", "gpu_memset"};
    const auto kind = static_cast<size_t>(r.kind);
    json e = {{"ph", "X"}, {"cat", kCat[kind]}, {"pid", r.device}, {"tid", r.stream}, {"ts", us(r.start)},
              {"dur", us(r.end) - us(r.start)}, {"args", {{"device", r.device}, {"stream", r.stream}}}};
    e["name"] = r.kind == gpu::GpuActivityRecord::Kind::kernel ? p.log.names.at(r.name)
                : r.kind == gpu::GpuActivityRecord::Kind::memcpy ? "Memcpy" : "Memset";
    if (r.bytes) e["args"]["bytes"] = r.bytes;
    if (r.operation > 0 && r.operation <= p.ops.size()) {
      const auto& op = p.ops[r.operation - 1];
      e["args"]["operation"] = op.cls + ": " + op.label;
      auto& s = span[r.operation - 1];
      s = {std::min(s.first, r.start), std::max(s.second, r.end)};
      stream_of[r.operation - 1] = r.stream;
    }
    event(e);
  }
  for (size_t i = 0; i < p.ops.size(); ++i) {
    if (span[i].second == 0) continue;
    event({{"ph", "X"}, {"cat", "gpu_user_annotation"}, {"name", p.ops[i].label}, {"pid", device},
           {"tid", stream_of[i]}, {"ts", us(span[i].first)}, {"dur", us(span[i].second) - us(span[i].first)},
           {"args", {{"class", p.ops[i].cls}, {"kernels_ms", p.ops[i].ms}}}});
  }
  std::fputs("\n]}\n", f.get());
  if (std::ferror(f.get()) || std::fflush(f.get()) != 0) {
    throw WorkError(fmt::format("--trace-out {}: the write failed", path));
  }
}

}  // namespace ub::measure
