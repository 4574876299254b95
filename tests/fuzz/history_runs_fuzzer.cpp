// libFuzzer target for what `history add` reads before it touches a database: any input is split
// into runs and their figures computed (analysis/history/stored_run.hpp), or refused with a WorkError
// / UsageError naming it; every figure it keeps is finite with its interval around it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "analysis/history/stored_run.hpp"
#include "base/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ub::LineSource t = ub::LineSource::text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.jsonl");
  try {
    for (const ub::StoredRun& r : ub::runs_of_file(t)) {
      for (const ub::MetricPoint& m : r.metrics) {
        if (!std::isfinite(m.median) || !std::isfinite(m.low) || !std::isfinite(m.high) || m.low > m.median ||
            m.median > m.high) {
          std::abort();
        }
      }
    }
  } catch (const ub::WorkError&) {
  } catch (const ub::UsageError&) {
  }
  return 0;
}
