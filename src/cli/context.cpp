// Data-directory resolution and the lazily loaded catalog; see context.hpp.
#include "cli/context.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cstdlib>

#include "base/error.hpp"

namespace ub::cli {

namespace {

bool has_catalog(const std::filesystem::path& dir) {
  return !dir.empty() && std::filesystem::exists(dir / "accelerators.json");
}

}  // namespace

std::filesystem::path Context::exe_dir() {
  std::array<char, 4096> buf{};
  const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return {};
  return std::filesystem::path(std::string(buf.data(), static_cast<size_t>(n))).parent_path();
}

std::filesystem::path Context::data_dir() const {
  if (!data_dir_flag.empty()) {
    if (!has_catalog(data_dir_flag)) {
      throw UsageError(fmt::format("--data-dir {}: no accelerators.json there", data_dir_flag));
    }
    return data_dir_flag;
  }
  if (const char* env = std::getenv("UPGRADEBENCH_DATA"); env && *env) {
    if (!has_catalog(env)) {
      throw UsageError(fmt::format("UPGRADEBENCH_DATA={}: no accelerators.json there", env));
    }
    return env;
  }
  const auto installed = exe_dir() / ".." / "share" / "upgradebench" / "data";
  if (has_catalog(installed)) return installed;
#ifdef UB_SOURCE_DATA_DIR
  if (has_catalog(UB_SOURCE_DATA_DIR)) return UB_SOURCE_DATA_DIR;
#endif
  throw WorkError(fmt::format("cannot find the data directory (looked in {}); give --data-dir",
                              installed.string()));
}

const Catalog& Context::catalog() {
  if (!catalog_) catalog_ = std::make_unique<Catalog>(Catalog::load(data_dir() / "accelerators.json"));
  return *catalog_;
}

ModelShape Context::model(const std::string& name, int64_t layers) const {
  if (layers < 0) throw UsageError("--layers must not be negative (0: all of the config's layers)");
  ModelShape m = load_model(name, data_dir() / "models");
  return layers > 0 ? with_layers(std::move(m), layers) : m;
}

std::vector<std::filesystem::path> Context::web_module_candidates() const {
  std::vector<std::filesystem::path> out;
  if (const char* env = std::getenv("UPGRADEBENCH_WEB"); env && *env) out.emplace_back(env);
  out.push_back(data_dir() / ".." / "web" / "node_modules");
  out.push_back(exe_dir() / ".." / "share" / "upgradebench" / "web" / "node_modules");
  return out;
}

}  // namespace ub::cli
