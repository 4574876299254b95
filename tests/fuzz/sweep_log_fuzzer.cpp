// libFuzzer target for the sweep-log reader (benchmark.py's format): any input must either read or be refused
// with a WorkError / UsageError; a crash, a sanitizer report or any other exception is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.hpp"
#include "records/readers/sweep_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ub::LineSource t =
      ub::LineSource::text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.log");
  try {
    if (ub::looks_like_sweep_log(t)) {
      const ub::RunLog r = ub::read_sweep_log(t);
      for (const ub::RunPoint& p : r.points) {
        if (p.status == ub::PointStatus::ok) (void)ub::point_stats(r, p);
      }
    }
  } catch (const ub::WorkError&) {
  } catch (const ub::UsageError&) {
  }
  return 0;
}
