// Ctrl-C in the middle of a `mamf` sweep: the process exits 130, and the records file is complete:
// the context record, every shape measured so far, and the summary, each line valid JSON.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "require_gpu.hpp"

namespace {

TEST(Interrupt, SigintMidSweepLeavesACompleteFile) {
  UB_REQUIRE_GPU();
  const std::string out = ::testing::TempDir() + "/interrupt_test.jsonl";
  std::remove(out.c_str());
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl(UB_BINARY, UB_BINARY, "mamf", "--m-range", "0", "8193", "512", "--n", "4096", "--k",
          "4096", "--warmup-s", "0.5", "--out", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for at least two shape records, then interrupt.
  auto shapes = [&] {
    std::ifstream in(out);
    int n = 0;
    for (std::string line; std::getline(in, line);) n += line.find("\"type\":\"mamf\"") != std::string::npos;
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (shapes() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GE(shapes(), 2) << "the sweep produced no records in time";
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);

  std::ifstream in(out);
  std::vector<nlohmann::json> records;
  for (std::string line; std::getline(in, line);) {
    ASSERT_NO_THROW(records.push_back(nlohmann::json::parse(line))) << line;
  }
  ASSERT_GE(records.size(), 4u);
  EXPECT_EQ(records.front()["type"], "context");
  EXPECT_EQ(records.back()["type"], "mamf_summary");
  EXPECT_EQ(records.back()["interrupted"], true);
  EXPECT_LT(records.back()["shapes"].get<int>(), 16) << "it should have stopped early";
  EXPECT_GE(records.back()["shapes"].get<int>(), 2);
}

}  // namespace
