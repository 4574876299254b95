// libFuzzer targets for the attention, decomposition, MAMF and collective readers (built four
// times, the reader chosen by UB_FUZZ_READER = 1, 2, 3, 4): any input must either read or be
// refused with a WorkError / UsageError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.hpp"
#include "records/readers/attention_log.hpp"
#include "records/readers/decomposition_log.hpp"
#include "records/readers/log_kind.hpp"
#include "records/readers/mamf_log.hpp"
#include "records/readers/nccl_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ub::LineSource t =
      ub::LineSource::text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.txt");
  try {
    (void)ub::detect_log_kind(t);
#if UB_FUZZ_READER == 1
    (void)ub::read_attention_log(t);
#elif UB_FUZZ_READER == 2
    (void)ub::read_decomposition_log(t);
#elif UB_FUZZ_READER == 4
    (void)ub::read_nccl_log(t);
#else
    const ub::MamfLog m = ub::read_mamf_log(t);
    (void)m.outcome.footer();
#endif
  } catch (const ub::WorkError&) {
  } catch (const ub::UsageError&) {
  }
  return 0;
}
