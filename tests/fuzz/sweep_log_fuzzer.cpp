// libFuzzer target for the sweep-log reader (benchmark.py's format): any input must either read or be refused
// with a WorkError / UsageError; a crash, a sanitizer report or any other exception is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.hpp"
#include "run_checks.hpp"
#include "records/readers/sweep_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ub::LineSource t =
      ub::LineSource::text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.log");
  try {
    if (ub::looks_like_sweep_log(t)) {
      const ub::RunLog r = ub::read_sweep_log(t);
      check_run(r);
    }
  } catch (const ub::WorkError&) {
  } catch (const ub::UsageError&) {
  }
  return 0;
}
