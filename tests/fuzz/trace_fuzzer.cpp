// libFuzzer target for the trace reader `decompose` streams (records/trace/): any bytes, written to a
// file as a trace would be, must decompose or be refused with a WorkError / UsageError.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "analysis/decompose/trace_decomposition.hpp"
#include "base/error.hpp"

#define UB_STRING(x) #x
#define UB_EXPANDED_STRING(x) UB_STRING(x)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    char name[] = "/tmp/upgradebench-trace-fuzz-XXXXXX";
    const int fd = mkstemp(name);
    if (fd >= 0) close(fd);
    return std::string(name);
  }();
  static ub::trace::KernelClasses classes = [] {
    ub::trace::KernelClasses k;
    k.add_file(std::string(UB_EXPANDED_STRING(UB_DATA_DIR)) + "/kernel_classes.json", false);
    return k;
  }();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    ub::trace::DecomposeOptions o;
    o.steps = 2;
    (void)ub::trace::decompose_trace(path, classes, o);
  } catch (const ub::WorkError&) {
  } catch (const ub::UsageError&) {
  }
  return 0;
}
