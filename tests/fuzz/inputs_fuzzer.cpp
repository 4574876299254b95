// libFuzzer targets for the inputs that are not logs: a model's config.json (UB_FUZZ_READER 0),
// the accelerator catalog (1), and the command line's value parsers (2: sizes, size lists,
// positive numbers, device lists, dtype lists). Any input must be read or refused with a
// WorkError / UsageError: no crash, no hang, no other exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.hpp"
#include "base/json_text.hpp"
#include "cli/arguments.hpp"
#include "facts/catalog.hpp"
#include "facts/dtype.hpp"
#include "facts/model_shape.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
#if UB_FUZZ_READER == 0
    (void)ub::parse_hf_config(ub::parse_json_text(text, "config.json"), "config.json");
#elif UB_FUZZ_READER == 1
    const ub::Catalog c = ub::Catalog::parse(text, "accelerators.json");
    for (const ub::Accelerator& a : c.all()) (void)a.capacity_gib();
#else
    const auto guard = [&](auto f) {
      try {
        f();
      } catch (const ub::UsageError&) {
      }
    };
    guard([&] { (void)ub::cli::parse_size(text, "--seqlen"); });
    guard([&] { (void)ub::cli::parse_size_list(text, "--seqlens"); });
    guard([&] { (void)ub::cli::parse_positive(text, "--price"); });
    guard([&] { (void)ub::cli::parse_devices(text, 8); });
    guard([&] { (void)ub::parse_dtype_list(text, "--dtypes"); });
#endif
  } catch (const ub::WorkError&) {
  } catch (const ub::UsageError&) {
  }
  return 0;
}
