// Handing a GPU command to upgradebench-gpu; see gpu_binary.hpp.
#include "cli/gpu_binary.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "base/error.hpp"

namespace ub::cli {

void run_in_gpu_binary(const Context& ctx, const std::string& command) {
  const std::filesystem::path gpu = Context::exe_dir() / "upgradebench-gpu";
  if (!std::filesystem::exists(gpu)) {
    throw WorkError(fmt::format("{}: this build of upgradebench has no GPU side (nvcc was not found at build "
                                "time, so there is no upgradebench-gpu beside it)", command));
  }
  std::vector<char*> argv;
  for (const std::string& a : ctx.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  execv(gpu.c_str(), argv.data());
  throw WorkError(fmt::format("{}: cannot run {}: {}", command, gpu.string(), std::strerror(errno)));
}

}  // namespace ub::cli
