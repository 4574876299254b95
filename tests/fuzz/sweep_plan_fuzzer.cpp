// libFuzzer target for what `sweep --resume` and `sweep --find-max` read from a records file
// (analysis/sweep_plan.hpp): an input goes either through the workload check or is read for the outcome
// of each length, or is refused with a WorkError / UsageError. From the outcomes the bisection runs
// against a boundary drawn from the input: every length it asks for lies strictly between the
// longest known fit and the shortest known failure, never past the ceiling, on the granularity,
// and it ends.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/sweep_plan.hpp"
#include "base/error.hpp"

namespace {

void check_bisection(const std::map<int64_t, ub::PointOutcome>& outcomes, const uint8_t* data, size_t size) {
  // The CLI's defaults (1k tokens, 4M) and two other granularities; the boundary from the input's bytes.
  constexpr int64_t kGranularity[] = {1024, 1, 4096};
  const int64_t granularity = kGranularity[(size / 4) % 3];
  const int64_t ceiling = int64_t{1} << 22;
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ULL;
  const auto boundary = static_cast<int64_t>(h % (2 * static_cast<uint64_t>(ceiling)));
  ub::MaxFitSearch search(granularity, ceiling);
  for (const auto& [s, o] : outcomes) {
    if (o == ub::PointOutcome::measured) search.fits(s);
    if (o == ub::PointOutcome::oom) search.does_not_fit(s);
  }
  if (size % 4 == 1) search.aim(static_cast<int64_t>((h >> 20) % (4 * static_cast<uint64_t>(ceiling))));
  for (int probes = 0;; ++probes) {
    const std::optional<int64_t> next = search.next();
    if (!next) return;
    const auto fit = search.longest_fit();
    const auto fail = search.shortest_failure();
    if (probes > 2000 || *next > ceiling || *next < granularity || *next % granularity != 0 ||
        (fit && *next <= *fit) || (fail && *next >= *fail)) {
      std::abort();
    }
    if (*next <= boundary) search.fits(*next);
    else search.does_not_fit(*next);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ub::LineSource t =
      ub::LineSource::text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.jsonl");
  const nlohmann::json expected = {{"model", "llama-3.1-8b"}, {"layers", 4}, {"batch", 1}, {"master_weights", true},
                                   {"activation_checkpointing", false}, {"loss_chunk", 0}};
  try {
    // The workload check on every other input: each of the two reads every line, and running both
    // on each input would halve the executions the target gets through.
    if (size % 2 == 0) {
      (void)ub::resume_mismatch(t, expected);
      return 0;
    }
    const auto outcomes = ub::sweep_outcomes(t, 1 + static_cast<int>(size % 3));
    for (const auto& [s, o] : outcomes) {
      if (s < 0) std::abort();
    }
    check_bisection(outcomes, data, size);
  } catch (const ub::WorkError&) {
  } catch (const ub::UsageError&) {
  }
  return 0;
}
