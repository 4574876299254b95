// Wrong results on purpose; see injected_wrong.hpp.
#include "measure/injected_wrong.hpp"

#include <cstdlib>
#include <string>

#include "base/text.hpp"
#include "gpu/check.hpp"

namespace ub::measure {

bool wrong_result_injected(const char* benchmark) {
  const char* env = std::getenv("UB_INJECT_WRONG_RESULT");
  if (!env || !*env) return false;
  for (const std::string& name : split(env, ',')) {
    if (name == "all" || name == benchmark) return true;
  }
  return false;
}

void spoil_if_injected(const char* benchmark, void* out, size_t bytes, cudaStream_t stream) {
  if (bytes > 0 && wrong_result_injected(benchmark)) UB_CUDA_CHECK(cudaMemsetAsync(out, 0xFF, bytes, stream));
}

}  // namespace ub::measure
