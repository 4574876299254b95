// The one failure path of the error-check family; see check.hpp.
#include "gpu/check.hpp"

#include <fmt/format.h>

namespace ub::gpu {

void fail_check(const char* lib, const char* expr, const std::string& what, const char* file,
                int line) {
  throw WorkError(fmt::format("{} error '{}' in `{}` at {}:{}", lib, what, expr, file, line));
}

}  // namespace ub::gpu
