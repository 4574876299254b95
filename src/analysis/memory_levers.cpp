// The longest sequence per memory lever and GPU; see memory_levers.hpp.
#include "analysis/memory_levers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "base/error.hpp"
#include "base/text.hpp"

namespace ub {

namespace {

// A configuration value that says yes: our records write true, benchmark.py's header 1.
bool yes(const RunLog& run, const char* key) {
  const auto it = run.config.find(key);
  if (it == run.config.end()) return false;
  const std::string v = to_lower(it->second);
  return v == "true" || v == "1" || v == "yes";
}

// A configuration value that is a positive size (a tile or chunk; 0, null or absent: off).
bool positive(const RunLog& run, const char* key) {
  const auto it = run.config.find(key);
  if (it == run.config.end()) return false;
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  return end != it->second.c_str() && *end == '\0' && std::isfinite(v) && v > 0;
}

std::string config_or(const RunLog& r, const char* key, const char* absent) {
  const auto it = r.config.find(key);
  return it == r.config.end() ? absent : it->second;
}

// What makes two runs one workload, whatever their memory levers: the model and its depth, the
// batch, the dtype, the precision of weights and optimizer state, and the ranks it was spread over.
std::string workload_of(const RunLog& r) {
  return fmt::format("{}{}, batch {}, {}, master weights {}, world size {}", r.model.value_or("model unknown"),
                     r.layers ? fmt::format(" ({} layers)", *r.layers) : "", r.batch, r.dtype,
                     config_or(r, "master_weights", "unknown"), config_or(r, "world_size", "1"));
}

// The longest length measured on both runs, and the ratio of their median steps there.
void step_cost(LeverRung& rung, const RunLog& base) {
  for (auto p = rung.run->points.rbegin(); p != rung.run->points.rend(); ++p) {
    if (p->status != PointStatus::ok) continue;
    const RunPoint* b = base.point(p->seqlen);
    if (!b || b->status != PointStatus::ok) continue;
    rung.cost_at = p->seqlen;
    rung.step_time_ratio = point_stats(*rung.run, *p).time_ms.median / point_stats(base, *b).time_ms.median;
    return;
  }
}

}  // namespace

int MemoryLevers::count() const {
  return int{checkpointing} + int{mlp_tiles} + int{chunked_loss} + int{offloaded_optimizer} + int{offloaded_checkpoints};
}

std::string MemoryLevers::name() const {
  std::vector<std::string> parts;
  if (checkpointing) parts.emplace_back(selective ? "selective checkpointing" : "checkpointing");
  if (mlp_tiles) parts.emplace_back("MLP tiles");
  if (chunked_loss) parts.emplace_back("chunked loss");
  if (offloaded_optimizer) parts.emplace_back("offloaded optimizer");
  if (offloaded_checkpoints) parts.emplace_back("offloaded checkpoints");
  if (parts.empty()) return "none";
  std::string out = parts.front();
  for (size_t i = 1; i < parts.size(); ++i) out += " + " + parts[i];
  return out;
}

MemoryLevers memory_levers(const RunLog& run) {
  MemoryLevers l;
  l.checkpointing = yes(run, "activation_checkpointing") || yes(run, "gc");
  // Our records say what a checkpointed step keeps: the layer inputs, or (selective) the attention
  // outputs and statistics too, a lever of its own (more memory, less recompute).
  l.selective = l.checkpointing && (yes(run, "selective_checkpointing") ||
                                    config_or(run, "checkpointing_kept", "").find("attention outputs") != std::string::npos);
  l.mlp_tiles = positive(run, "mlp_tile");
  l.chunked_loss = positive(run, "loss_chunk") || yes(run, "liger");  // Liger's fused linear cross-entropy
  l.offloaded_optimizer = sharding_of(run).offload_optimizer;
  l.offloaded_checkpoints = yes(run, "offload_checkpoints");
  return l;
}

const LeverRung* LeverLadder::first_reaching(size_t g, int64_t seqlen) const {
  for (const LeverRung& r : rungs) {
    if (g < r.longest.size() && r.longest[g].tokens && *r.longest[g].tokens >= seqlen) return &r;
  }
  return nullptr;
}

const LeverRung* LeverLadder::furthest(size_t g) const {
  const LeverRung* best = nullptr;
  for (const LeverRung& r : rungs) {
    if (g < r.longest.size() && r.longest[g].tokens && (!best || *r.longest[g].tokens > *best->longest[g].tokens)) best = &r;
  }
  return best;
}

std::string LeverLadder::cost_text(const LeverRung& r) const {
  if (r.step_time_ratio) return fmt::format("{:.2f}x at {}", *r.step_time_ratio, *r.cost_at);
  return !rungs.empty() && &r == &rungs.front() ? "base" : "-";
}

LeverLadder lever_ladder(const std::vector<const RunLog*>& runs, std::vector<LadderGpu> gpus,
                         const std::vector<std::optional<SweepMax>>& found) {
  LeverLadder ladder;
  ladder.gpus = std::move(gpus);
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunLog& r = *runs[i];
    const RunLog& first = *runs.front();
    if (workload_of(r) != workload_of(first)) {
      throw UsageError(fmt::format("{} and {} measured different workloads ({} vs {}): the levers are compared on one",
                                   first.path, r.path, workload_of(first), workload_of(r)));
    }
    LeverRung rung;
    rung.run = &r;
    rung.levers = memory_levers(r);
    for (const LeverRung& other : ladder.rungs) {
      if (other.levers == rung.levers && other.run->gpu == r.gpu) {
        throw UsageError(fmt::format("{} and {} both ran with {} on the {}: give one run per set of levers", other.run->path,
                                     r.path, rung.levers.name(), r.gpu.empty() ? "same GPU" : r.gpu));
      }
    }
    for (const LadderGpu& g : ladder.gpus) {
      const bool own = g.measured_on && g.measured_on(r);
      rung.longest.push_back(longest_sequence(r, g.capacity_gib, i < found.size() ? found[i] : std::nullopt, own));
    }
    ladder.rungs.push_back(std::move(rung));
  }
  std::stable_sort(ladder.rungs.begin(), ladder.rungs.end(),
                   [](const LeverRung& a, const LeverRung& b) { return a.levers.count() < b.levers.count(); });
  if (!ladder.rungs.empty()) {
    const RunLog& base = *ladder.rungs.front().run;
    for (size_t i = 1; i < ladder.rungs.size(); ++i) {
      if (ladder.rungs[i].run->gpu == base.gpu) step_cost(ladder.rungs[i], base);
    }
  }
  return ladder;
}

}  // namespace ub
