// The layers of src/ as the code must keep them: each folder includes only the folders below it,
// and no file includes itself back through others. The CMake targets make a call up the stack a
// link error; this test makes an include up the stack (a header-only use the linker never sees)
// a test failure, naming the file, the line and the arrow.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Each layer and the layers it may include (its own always allowed).
const std::map<std::string, std::set<std::string>>& allowed() {
  static const std::map<std::string, std::set<std::string>> a = {
      {"base", {}},
      {"facts", {"base"}},
      {"model", {"base", "facts"}},
      {"records", {"base", "facts", "model"}},
      {"analysis", {"base", "facts", "model", "records"}},
      {"dist", {"base"}},
      {"store", {"base", "facts", "model", "records", "analysis", "dist"}},
      {"report", {"base", "facts", "model", "records", "analysis"}},
      {"gpu", {"base", "facts", "model", "records"}},
      {"measure", {"base", "facts", "model", "records", "analysis", "gpu"}},
      {"cli", {"base", "facts", "model", "records", "analysis", "dist", "store", "report", "gpu", "measure"}},
  };
  return a;
}

struct Include {
  std::string target;  // path under src/, e.g. "facts/catalog.hpp"
  int line = 0;
};

bool is_source(const fs::path& p) {
  static const std::set<std::string> ext = {".hpp", ".cpp", ".cu", ".cuh", ".in"};
  return ext.count(p.extension().string()) > 0;
}

// Every source under src/, by its path under src/, with the project includes it makes.
std::map<std::string, std::vector<Include>> project_includes() {
  const fs::path src = UB_SRC_DIR;
  static const std::regex include(R"re(^\s*#\s*include\s+"([a-z_]+/[^"]+)")re");
  std::map<std::string, std::vector<Include>> out;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file() || !is_source(e.path())) continue;
    const std::string rel = fs::relative(e.path(), src).generic_string();
    std::ifstream in(e.path());
    std::string line;
    auto& list = out[rel];
    for (int n = 1; std::getline(in, line); ++n) {
      std::smatch m;
      if (std::regex_search(line, m, include)) list.push_back({m[1].str(), n});
    }
  }
  return out;
}

std::string layer_of(const std::string& path) { return path.substr(0, path.find('/')); }

TEST(Layering, EveryFolderOfSrcIsALayer) {
  for (const auto& [file, _] : project_includes()) {
    if (file.find('/') == std::string::npos) continue;  // src/CMakeLists.txt and the like
    EXPECT_TRUE(allowed().count(layer_of(file))) << "src/" << file << " is in no layer of tests/core/layering_test.cpp";
  }
}

TEST(Layering, EveryIncludePointsDownTheLayers) {
  const auto files = project_includes();
  int checked = 0;
  for (const auto& [file, includes] : files) {
    const std::string from = layer_of(file);
    const auto rules = allowed().find(from);
    if (rules == allowed().end()) continue;  // reported by EveryFolderOfSrcIsALayer
    for (const Include& inc : includes) {
      const std::string to = layer_of(inc.target);
      ++checked;
      if (to == from) continue;
      EXPECT_TRUE(rules->second.count(to))
          << "src/" << file << ":" << inc.line << " includes " << inc.target << ": " << from << " may not include "
          << to;
    }
  }
  EXPECT_GT(checked, 500);  // the tree was read
}

// A file that reaches itself through its includes: the path of the circle, or "" when none.
std::string find_circle(const std::map<std::string, std::vector<Include>>& files) {
  std::map<std::string, int> state;  // 1 on the current path, 2 done
  std::vector<std::string> path;
  std::string circle;
  std::function<bool(const std::string&)> visit = [&](const std::string& f) {
    state[f] = 1;
    path.push_back(f);
    const auto it = files.find(f);
    if (it != files.end()) {
      for (const Include& inc : it->second) {
        if (state[inc.target] == 1) {
          for (const std::string& p : path) circle += p + " -> ";
          circle += inc.target;
          return true;
        }
        if (state[inc.target] == 0 && visit(inc.target)) return true;
      }
    }
    path.pop_back();
    state[f] = 2;
    return false;
  };
  for (const auto& [f, _] : files) {
    if (state[f] == 0 && visit(f)) break;
  }
  return circle;
}

TEST(Layering, NoFileIncludesItselfBack) {
  EXPECT_EQ(find_circle(project_includes()), "");
}

TEST(Layering, ACircleIsFound) {
  // The search itself, on a made-up tree: a -> b -> c -> a.
  std::map<std::string, std::vector<Include>> files = {
      {"base/a.hpp", {{"base/b.hpp", 1}}}, {"base/b.hpp", {{"base/c.hpp", 1}}}, {"base/c.hpp", {{"base/a.hpp", 1}}}};
  EXPECT_EQ(find_circle(files), "base/a.hpp -> base/b.hpp -> base/c.hpp -> base/a.hpp");
  files["base/c.hpp"].clear();
  EXPECT_EQ(find_circle(files), "");
}

}  // namespace
