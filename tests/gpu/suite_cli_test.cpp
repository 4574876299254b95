// `suite` end to end on the GPU, twice into two folders, then `decide` on the two: one GPU
// measured twice is the SAME GPU within noise. And `mamf --shapes-of`, the step's own products.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "require_gpu.hpp"

namespace {

namespace fs = std::filesystem;

struct CliRun {
  int code = -1;
  std::string out, err;  // stdout, and stderr's last lines (a failure's message)
};

CliRun run(const std::string& args) {
  CliRun r;
  const fs::path err = fs::temp_directory_path() / ("suite-cli-stderr-" + std::to_string(::getpid()));
  FILE* p = popen((std::string(UB_BINARY) + " " + args + " 2>" + err.string()).c_str(), "r");
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err);
  r.err.assign(std::istreambuf_iterator<char>(in), {});
  if (r.err.size() > 2000) r.err.erase(0, r.err.size() - 2000);
  fs::remove(err);
  return r;
}

fs::path fresh(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

TEST(SuiteCli, TwoSuitesOfOneGpuDecideSame) {
  UB_REQUIRE_GPU();
  const std::string options = " --layers 2 --seqlens 2k,4k --steps 6 --no-find-max --budget 5m";
  const fs::path a = fresh("suite-a"), b = fresh("suite-b");
  for (const fs::path& dir : {a, b}) {
    const CliRun s = run("suite --out " + dir.string() + options + " --json");
    ASSERT_EQ(s.code, 0) << s.out << s.err;
    const auto m = nlohmann::json::parse(s.out);
    for (const auto& part : m.at("parts")) {
      EXPECT_EQ(part.at("status"), "done") << part.dump();
      EXPECT_TRUE(fs::exists(dir / part.at("records").get<std::string>())) << part.dump();
    }
  }
  const CliRun d = run("decide " + a.string() + " " + b.string() + " --price-old 3 --price-new 3 --json");
  ASSERT_EQ(d.code, 0) << d.out << d.err;
  const auto j = nlohmann::json::parse(d.out);
  EXPECT_EQ(j.at("verdict"), "same GPU") << j.at("line");
  EXPECT_NE(j.at("line").get<std::string>().find("agree within noise"), std::string::npos) << j.at("line");
  EXPECT_EQ(j.at("data"), "MEASURED");
  ASSERT_EQ(j.at("lengths").size(), 2u);
  for (const auto& r : j.at("lengths")) {
    EXPECT_GT(r.at("speedup").get<double>(), 0.9) << r.dump();
    EXPECT_LT(r.at("speedup").get<double>(), 1.1) << r.dump();
  }
  // Resumed, a finished suite runs nothing again.
  const CliRun again = run("suite --out " + a.string() + options + " --resume --json");
  EXPECT_EQ(again.code, 0) << again.out << again.err;
}

// A suite whose folder no longer backs two done parts (a part's records deleted, the sweep's
// longest length cut from its records) resumes: the dry run names each and changes nothing, the
// resume measures the part again and continues the sweep from the steps it kept, and the folder
// then reads as decide reads a whole one.
TEST(SuiteCli, AResumeMeasuresAgainWhatTheFolderNoLongerBacks) {
  UB_REQUIRE_GPU();
  const std::string options = " --layers 2 --seqlens 1k,2k --steps 4 --no-find-max --budget 5m";
  const fs::path dir = fresh("suite-damaged");
  const CliRun s = run("suite --out " + dir.string() + options + " --json");
  ASSERT_EQ(s.code, 0) << s.out << s.err;
  fs::remove(dir / "bandwidth.jsonl");
  std::string kept;
  size_t kept_steps = 0;
  {
    std::ifstream in(dir / "sweep.jsonl");
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line);
      if (j.value("seqlen", 0) == 2048) continue;
      kept_steps += j.value("type", "") == "train_step";
      kept += line + "\n";
    }
  }
  ASSERT_GT(kept_steps, 0u);
  std::ofstream(dir / "sweep.jsonl", std::ios::trunc) << kept;

  const CliRun dry = run("suite --out " + dir.string() + options + " --resume --dry-run --json");
  ASSERT_EQ(dry.code, 0) << dry.out << dry.err;
  std::map<std::string, std::string> action;
  const nlohmann::json plan = nlohmann::json::parse(dry.out);  // held: a range over a temporary's member dangles
  for (const auto& part : plan.at("parts")) {
    action[part.at("name").get<std::string>()] = part.at("action").get<std::string>();
  }
  EXPECT_EQ(action["bandwidth"], "run again");
  EXPECT_EQ(action["sweep"], "continue");
  EXPECT_EQ(action["mamf"], "keep") << dry.out;
  EXPECT_FALSE(fs::exists(dir / "bandwidth.jsonl"));

  const CliRun again = run("suite --out " + dir.string() + options + " --resume --json");
  ASSERT_EQ(again.code, 0) << again.out << again.err;
  const nlohmann::json resumed = nlohmann::json::parse(again.out);
  for (const auto& part : resumed.at("parts")) EXPECT_EQ(part.at("status"), "done") << part.dump();
  EXPECT_TRUE(fs::exists(dir / "bandwidth.jsonl"));
  std::map<int64_t, size_t> steps;
  std::ifstream in(dir / "sweep.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.value("type", "") == "train_step") ++steps[j.value("seqlen", int64_t{0})];
  }
  EXPECT_EQ(steps[1024], kept_steps) << "the steps the sweep kept are measured once";
  EXPECT_GT(steps[2048], 0u) << "the length cut is measured again";

  const CliRun d = run("decide " + dir.string() + " --to b200-sxm --json");
  ASSERT_EQ(d.code, 0) << d.out << d.err;
  EXPECT_EQ(nlohmann::json::parse(d.out).at("lengths").size(), 2u) << d.out;
}

TEST(MamfCli, TheShapesOfAStepAreTimedWithTheirCounts) {
  UB_REQUIRE_GPU();
  const fs::path out = fresh("mamf-step").string() + ".jsonl";
  const CliRun r = run("mamf --shapes-of llama-tiny --seqlen 256 --warmup-s 0 --max-seconds 0.2 --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::ifstream in(out);
  int shapes = 0;
  double step_tflops = 0;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.value("type", "") == "mamf") {
      ++shapes;
      EXPECT_TRUE(j.contains("step_gemm")) << line;
      EXPECT_GE(j.value("count", 0), 1) << line;
    }
    if (j.value("type", "") == "mamf_summary" && j["step_tflops"].is_number()) step_tflops = j["step_tflops"];
  }
  EXPECT_GE(shapes, 10);  // qkv, o, gate|up, down and lm_head, three products each, some shapes shared
  EXPECT_GT(step_tflops, 0);
}

}  // namespace
