// A file's whole text, for tests that check what a command wrote or left alone ("" when it cannot
// be read).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ub_test {

inline std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace ub_test
