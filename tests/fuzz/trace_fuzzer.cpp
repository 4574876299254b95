// libFuzzer target for the trace reader `decompose` streams (records/trace/): any bytes, written to a
// file as a trace would be, must decompose or be refused with a WorkError / UsageError.

#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/decompose/trace_decomposition.hpp"
#include "base/error.hpp"
#include "input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ub::trace::KernelClasses classes = [] {
    ub::trace::KernelClasses k;
    k.add_file(fuzz_data_dir() + "/kernel_classes.json", false);
    return k;
  }();
  const std::optional<std::string> input = write_fuzz_input(data, size);
  if (!input) return 0;
  const std::string& path = *input;
  try {
    ub::trace::DecomposeOptions o;
    o.steps = 2;
    (void)ub::trace::decompose_trace(path, classes, o);
  } catch (const ub::WorkError&) {
  } catch (const ub::UsageError&) {
  }
  return 0;
}
