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

namespace {
std::filesystem::path gpu_binary() { return Context::exe_dir() / "upgradebench-gpu"; }
}  // namespace

bool has_gpu_binary() { return std::filesystem::exists(gpu_binary()); }

void run_in_gpu_binary(const Context& ctx, const std::string& command) {
  const std::filesystem::path gpu = gpu_binary();
  if (!has_gpu_binary()) {
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
