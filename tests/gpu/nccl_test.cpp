// `upgradebench nccl` end to end on this machine's GPUs: every collective right at odd sizes in
// every dtype, in and out of place; a rank that fails (an error, or killed) ends the whole job
// quickly, each rank naming the one that failed first, the records already written kept; two
// ranks forced off NVLink and shared memory go through NCCL's network transport, as two nodes.
// The tests that need two GPUs say so and skip on one.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "require_gpu.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct CliRun {
  int code = -1;
  std::string out, err;
  double seconds = 0;
};

std::string temp_path(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  std::filesystem::remove(p);
  return p.string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs the binary with `env` before it (VAR=value ...); stdout and stderr kept apart.
CliRun run(const std::string& env, const std::string& args) {
  const std::string err = temp_path("nccl-stderr");
  const auto start = Clock::now();
  CliRun r;
  FILE* p = popen((env + " " + std::string(UB_BINARY) + " " + args + " 2>" + err).c_str(), "r");
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.err = slurp(err);
  std::filesystem::remove(err);
  return r;
}

int gpus() { return static_cast<int>(ub::gpu::list_devices().devices.size()); }

#define UB_REQUIRE_TWO_GPUS()                                                                                    \
  do {                                                                                                           \
    UB_REQUIRE_GPU();                                                                                            \
    if (gpus() < 2) GTEST_SKIP() << "this test needs two GPUs (this machine has " << gpus() << ")";              \
  } while (0)

constexpr const char* kQuick = "--warmup-s 0 --min-samples 3 --max-samples 3 --noise 0.5";

TEST(Nccl, EveryCollectiveIsRightAtOddSizesInEveryDtype) {
  UB_REQUIRE_GPU();
  const int n = std::min(gpus(), 2);
  const std::string out = temp_path("nccl-all");
  const CliRun r = run("", "nccl --gpus " + std::to_string(n) + " --ops all --dtypes bf16,fp16,fp32,fp8 --sizes 1000,4099,1048583 " +
                               kQuick + " --json --out " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // 7 collectives x 4 dtypes x 3 sizes out of place, and in place for the 5 that have it.
  EXPECT_EQ(j.size(), 7u * 4 * 3 + 5u * 4 * 3);
  for (const auto& p : j) {
    EXPECT_TRUE(p["ok"].get<bool>()) << p.dump();
    EXPECT_EQ(p["wrong"], 0) << p.dump();
    EXPECT_GT(p["time_us"].get<double>(), 0) << p.dump();
    if (n > 1 && p["collective"] == "all_reduce") {
      EXPECT_GT(p["busbw_gbps"].get<double>(), 0);
    }
  }
  // The records file: the context (with the world) and one record per point.
  std::istringstream lines(slurp(out));
  std::string first;
  std::getline(lines, first);
  const auto context = nlohmann::json::parse(first);
  EXPECT_EQ(context["world"]["size"], n);
  EXPECT_EQ(context["world"]["ranks"].size(), static_cast<size_t>(n));
  std::filesystem::remove(out);
}

TEST(Nccl, AFailedRankEndsTheJobNamingIt) {
  UB_REQUIRE_TWO_GPUS();
  for (const char* how : {"throw", "kill"}) {
    const std::string out = temp_path("nccl-fault");
    const CliRun r = run(std::string("UB_FAULT=1:measure:") + how,
                         std::string("nccl --gpus 2 --sizes 1M,16M ") + kQuick + " --out " + out);
    EXPECT_NE(r.code, 0) << how;
    EXPECT_LT(r.seconds, 60) << how;
    EXPECT_NE(r.err.find("rank 1 failed first"), std::string::npos) << how << ": " << r.err;
    // Rank 0's records file exists and every line in it is whole.
    std::istringstream lines(slurp(out));
    for (std::string line; std::getline(lines, line);) {
      EXPECT_TRUE(nlohmann::json::accept(line)) << line;
    }
    std::filesystem::remove(out);
  }
}

TEST(Nccl, TwoRanksOffNvlinkGoThroughTheNetworkTransport) {
  UB_REQUIRE_TWO_GPUS();
  // NCCL's log (one file per process) says which transport each connection took.
  const std::string logs = temp_path("nccl-debug");
  std::filesystem::create_directories(logs);
  const CliRun r = run("NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_DEBUG=INFO NCCL_DEBUG_FILE=" +
                           logs + "/%p.log",
                       std::string("nccl --gpus 2 --ops all_reduce,all_gather --sizes 4099,1M ") + kQuick + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  std::string log;
  for (const auto& f : std::filesystem::directory_iterator(logs)) log += slurp(f.path().string());
  std::filesystem::remove_all(logs);
  EXPECT_NE(log.find("via NET/Socket"), std::string::npos) << "NCCL did not report its socket transport:\n" << log.substr(0, 2000);
  EXPECT_EQ(log.find("via P2P"), std::string::npos) << "a connection went through P2P";
  for (const auto& p : nlohmann::json::parse(r.out)) EXPECT_TRUE(p["ok"].get<bool>()) << p.dump();
}

}  // namespace
