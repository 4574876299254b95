// The files the command-line tests write: each under the test's temporary folder, named for its
// case, so that a failure leaves the input that caused it to read.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ub_test {

inline std::string temp_path(const std::string& name) { return ::testing::TempDir() + "/hostile_" + name; }

// A folder path under the test's temp folder, with nothing there (a report of an earlier build's
// test run is no report of this one's).
inline std::string fresh_folder(const std::string& name) {
  std::filesystem::remove_all(temp_path(name));
  return temp_path(name);
}

inline std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// `text` with the first `from` replaced by `to` (a test failure when there is none).
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "'" << from << "' is not in the text";
    return text;
  }
  return text.replace(at, from.size(), to);
}

// `text` with every `from` replaced by `to` (a test failure when there is none).
inline std::string replaced_all(std::string text, const std::string& from, const std::string& to) {
  if (text.find(from) == std::string::npos) ADD_FAILURE() << "'" << from << "' is not in the text";
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
  return text;
}

// A history database path with nothing there yet.
inline std::string fresh_db(const std::string& name) {
  const std::string db = temp_path(name + ".sqlite");
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  return db;
}

}  // namespace ub_test
