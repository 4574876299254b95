// libFuzzer target for the records reader (docs/records.md): any input must either read or be
// refused with a WorkError / UsageError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.hpp"
#include "run_checks.hpp"
#include "records/readers/records_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ub::LineSource t =
      ub::LineSource::text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.jsonl");
  try {
    if (ub::looks_like_records(t)) {
      const ub::RunLog r = ub::read_records(t);
      check_run(r);
    }
  } catch (const ub::WorkError&) {
  } catch (const ub::UsageError&) {
  }
  return 0;
}
