// Running the `upgradebench` binary in tests: its output, error and exit code, golden files and
// the one-line errors, shared by the command-line test files.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ub_test {

struct Result {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A shell command's stdout and exit code.
inline Result capture(const std::string& cmd) {
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs the binary with `args` (a shell-quoted string), capturing stdout, stderr and exit code;
// in `cwd` when given (so file names in the output do not depend on where the checkout is).
inline Result run(const std::string& args, const std::string& cwd = "") {
  // One file per test process: CTest may run the tests of this binary in parallel.
  const std::string err_file = fmt::format("{}/ub_stderr_{}.txt", ::testing::TempDir(), getpid());
  Result r = capture(fmt::format("{}{} {} 2>{}", cwd.empty() ? "" : "cd " + cwd + " && ", UB_BINARY, args, err_file));
  r.err = slurp(err_file);
  return r;
}

// run() as the user nobody (through runuser; the caller is root): stderr comes with stdout.
inline Result run_as_nobody(const std::string& args) {
  Result r = capture(fmt::format("runuser -u nobody -- {} {} 2>&1", UB_BINARY, args));
  if (r.code != 0) r.err = r.out;
  return r;
}

// `report` failed for want of gnuplot or the npm libraries (not for what the test checks).
inline bool report_tools_missing(const Result& r) {
  return r.code != 0 && (r.err.find("gnuplot is not installed") != std::string::npos || r.err.find("npm ci") != std::string::npos);
}

inline void expect_golden(const std::string& name, const std::string& args, const std::string& cwd = "") {
  const Result r = run(args, cwd);
  ASSERT_EQ(r.code, 0) << args << "\n" << r.err;
  EXPECT_EQ(r.err, "") << args;
  const std::string path = std::string(UB_GOLDEN_DIR) + "/" + name;
  if (std::getenv("UB_UPDATE_GOLDEN")) {
    std::ofstream(path) << r.out;
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << "missing golden file " << path
                                             << " (run with UB_UPDATE_GOLDEN=1)";
  EXPECT_EQ(r.out, slurp(path)) << "output of `upgradebench " << args << "` differs from " << path;
}

inline void expect_error(const std::string& args, int code, const std::string& message_part) {
  const Result r = run(args);
  EXPECT_EQ(r.code, code) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(message_part), std::string::npos) << args << "\nstderr: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line expected: " << r.err;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
}

}  // namespace ub_test
