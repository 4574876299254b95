// A failed check fails the command: with a wrong result injected between the work and its check
// (UB_INJECT_WRONG_RESULT, measure/injected_wrong.hpp), `mamf`, `attention`, `bandwidth` and
// `nccl` on the GPU write every record, mark the points wrong, and exit 1 with the count in the
// last line; without the injection the same command exits 0.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "require_gpu.hpp"

namespace {

struct CliRun {
  int code = -1;
  std::string err;
};

// Runs the binary with `env` before it; stdout is thrown away, stderr kept.
CliRun run(const std::string& env, const std::string& args) {
  CliRun r;
  FILE* p = popen((env + " " + std::string(UB_BINARY) + " " + args + " 2>&1 >/dev/null").c_str(), "r");
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.err.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  const size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

std::string temp_path(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".jsonl");
  std::filesystem::remove(p);
  return p.string();
}

// The records of `type` in `path` and how many of them hold a measurement (no error; a record
// with an "ok" field says so there too).
std::pair<int, int> records_and_ok(const std::string& path, const std::string& type) {
  std::ifstream in(path);
  int n = 0, ok = 0;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.value("type", "") != type) continue;
    ++n;
    ok += !j.contains("error") && j.value("ok", true) ? 1 : 0;
  }
  return {n, ok};
}

struct Case {
  const char* benchmark;
  const char* args;
  const char* record;
  int points;
};

const Case kCases[] = {
    {"mamf", "mamf --m 1024 --n 1024 --k 1024,2048 --max-seconds 0.2 --warmup-s 0", "mamf", 2},
    {"attention", "attention --seqlens 512,1024 --max-seconds 0.2 --warmup-s 0", "attention", 2},
    {"bandwidth", "bandwidth --sizes 64M --ops copy,read --max-seconds 0.2 --warmup-s 0", "bandwidth", 2},
    {"nccl", "nccl --sizes 1M,4M --ops all_reduce --place out --max-seconds 0.2 --warmup-s 0", "nccl", 2},
};

TEST(FailedCheck, AWrongResultFailsTheCommandAfterEveryRecordIsWritten) {
  UB_REQUIRE_GPU();
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.benchmark);
    const std::string out = temp_path(std::string("wrong-") + c.benchmark);
    const CliRun wrong = run(std::string("UB_INJECT_WRONG_RESULT=") + c.benchmark, std::string(c.args) + " --out " + out);
    EXPECT_EQ(wrong.code, 1) << wrong.err;
    EXPECT_NE(last_line(wrong.err).find(std::to_string(c.points) + " of " + std::to_string(c.points) +
                                        " point(s) failed their check"),
              std::string::npos)
        << wrong.err;
    const auto [n, ok] = records_and_ok(out, c.record);
    EXPECT_EQ(n, c.points);
    EXPECT_EQ(ok, 0);

    const std::string good_out = temp_path(std::string("right-") + c.benchmark);
    const CliRun right = run("UB_INJECT_WRONG_RESULT=", std::string(c.args) + " --out " + good_out);
    EXPECT_EQ(right.code, 0) << right.err;
    EXPECT_EQ(records_and_ok(good_out, c.record), std::make_pair(c.points, c.points));
  }
}

// Another benchmark's injection leaves this one's results alone.
TEST(FailedCheck, TheInjectionNamesOneBenchmark) {
  UB_REQUIRE_GPU();
  const std::string out = temp_path("wrong-other");
  const CliRun r = run("UB_INJECT_WRONG_RESULT=attention", std::string(kCases[0].args) + " --out " + out);
  EXPECT_EQ(r.code, 0) << r.err;
}

}  // namespace
