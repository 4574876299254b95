// `upgradebench train` end to end on the GPU: the context record then one train_step record per
// step on stdout and in the records file, --mem-debug's probes, records that the project's own
// `compare` reads, and a model that does not fit giving a train_oom record and exit code 3.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "require_gpu.hpp"

namespace {

struct CliRun {
  int code = -1;
  std::string out;
};

CliRun run(const std::string& args) {
  CliRun r;
  FILE* p = popen((std::string(UB_BINARY) + " " + args + " 2>/dev/null").c_str(), "r");
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> v;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) v.push_back(nlohmann::json::parse(line));
  }
  return v;
}

std::string temp_path(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".jsonl");
  std::filesystem::remove(p);
  return p.string();
}

// The records read back by the readers: stored in a new history database and shown (a file
// compared with itself is refused as the same measurement).
CliRun read_back(const std::string& records) {
  const std::string db = temp_path("read_back") + ".sqlite";
  const CliRun added = run("history add --db " + db + " " + records);
  if (added.code != 0) return added;
  CliRun shown = run("history show 1 --json --db " + db);
  std::filesystem::remove(db);
  return shown;
}

TEST(TrainCli, PrintsContextThenOneRecordPerStepAndTheReadersReadThem) {
  UB_REQUIRE_GPU();
  const std::string out = temp_path("train");
  const CliRun r = run("train --model llama-tiny --seqlen 128 --steps 3 --warmup 1 --mem-debug --breakdown --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto recs = json_lines(r.out);
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs[0]["type"], "context");
  EXPECT_EQ(recs[0]["config"]["model"], "llama-tiny");
  EXPECT_EQ(recs[0]["config"]["seqlen"], 128);
  int steps = 0, probes = 0, breakdowns = 0, decompositions = 0;
  for (const auto& rec : recs) {
    if (rec["type"] == "train_step") {
      EXPECT_EQ(rec["step"], steps);
      EXPECT_EQ(rec["warmup"], steps < 1);
      EXPECT_GT(rec["exec_time_ms"].get<double>(), 0);
      EXPECT_GT(rec["tflops"].get<double>(), 0);
      EXPECT_TRUE(std::isfinite(rec["loss"].get<double>()));
      EXPECT_GT(rec["peak_mem_gib"].get<double>(), 0);
      ++steps;
    } else if (rec["type"] == "train_breakdown") {
      ++breakdowns;
      double sum = 0;
      for (const auto& c : rec["classes"]) sum += c["ms"].get<double>();
      EXPECT_NEAR(sum, rec["step_ms"].get<double>(), 0.05 * rec["step_ms"].get<double>());
      EXPECT_FALSE(rec["gemm_algorithms"].empty());
    } else if (rec["type"] == "decomposition") {
      ++decompositions;
      EXPECT_EQ(rec["source"], "upgradebench engine (CUPTI)");
      EXPECT_EQ(rec["steps"], 3);  // --profile-steps' default
      double sum = 0;
      for (const auto& b : rec["buckets"]) sum += b["ms"].get<double>();
      EXPECT_NEAR(sum, rec["step_ms"].get<double>(), 1e-6 * rec["step_ms"].get<double>());
      EXPECT_GT(rec["buckets"][0]["kernel_ms"].get<double>(), 0);  // the GEMMs
      EXPECT_GT(rec["wall_step_ms"].get<double>(), 0);
    } else if (rec["type"] == "train_memory") {
      EXPECT_GT(rec["memory"]["peak_gib"].get<double>(), 0);
      ++probes;
    }
  }
  EXPECT_EQ(steps, 4);
  EXPECT_EQ(probes, 3);  // after forward, backward, step
  EXPECT_EQ(breakdowns, 1);
  EXPECT_EQ(decompositions, 1);
  // The file holds the same records.
  std::ifstream f(out);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(json_lines(ss.str()).size(), recs.size());
  const CliRun c = read_back(out);
  EXPECT_EQ(c.code, 0) << c.out;
  EXPECT_NE(c.out.find("128"), std::string::npos) << c.out;
  std::filesystem::remove(out);
}

// `decompose` with no trace runs our engine: the step timed, then profiled under CUPTI; the table
// and --json say where the time went, the buckets add up, the GEMMs and attention have rates.
TEST(DecomposeCli, OurEngineUnderCupti) {
  UB_REQUIRE_GPU();
  const std::string out = temp_path("decompose");
  const std::string trace = temp_path("decompose-trace") + ".json";
  const CliRun r = run("decompose --model llama-tiny --seqlen 256 --steps 2 --warmup 1 --profile-steps 2 --json --out " +
                       out + " --trace-out " + trace);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u) << r.out;
  EXPECT_EQ(j[0]["steps"], 2);
  double sum = 0;
  for (const auto& b : j[0]["buckets"]) {
    sum += b["ms"].get<double>();
    EXPECT_GE(b["ms"].get<double>(), 0);
  }
  EXPECT_NEAR(sum, j[0]["step_ms"].get<double>(), 1e-6 * j[0]["step_ms"].get<double>());
  EXPECT_GT(j[0]["buckets"][0]["tflops"].get<double>(), 0);  // gemm
  EXPECT_GT(j[0]["buckets"][1]["tflops"].get<double>(), 0);  // attention
  EXPECT_GT(j[0]["buckets"][2]["gbps"].get<double>(), 0);    // element-wise
  // The records file: the context, the steps, the decomposition; compare reads it.
  std::ifstream f(out);
  std::stringstream ss;
  ss << f.rdbuf();
  const auto recs = json_lines(ss.str());
  EXPECT_EQ(recs.front()["type"], "context");
  EXPECT_EQ(recs.back()["type"], "decomposition");
  const CliRun c = read_back(out);
  EXPECT_EQ(c.code, 0) << c.out;
  // The profiled steps as a Chrome trace, read back: the same steps on the same clock.
  const CliRun t = run("decompose " + trace + " --json");
  ASSERT_EQ(t.code, 0) << t.out;
  const auto back = nlohmann::json::parse(t.out);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0]["steps"], 2);
  EXPECT_NEAR(back[0]["step_ms"].get<double>(), j[0]["step_ms"].get<double>(), 1e-3);
  // Kernel names (demangled, as Kineto writes them) put every kernel in its operation's bucket.
  for (size_t b = 0; b < 9; ++b) {
    EXPECT_NEAR(back[0]["buckets"][b]["ms"].get<double>(), j[0]["buckets"][b]["ms"].get<double>(), 1e-3)
        << back[0]["buckets"][b]["name"];
  }
  EXPECT_TRUE(back[0]["unclassified"].empty()) << back[0]["unclassified"].dump();
  std::filesystem::remove(out);
  std::filesystem::remove(trace);
}

// Each step's telemetry carries its energy: on a GPU with the driver's energy counter (Volta and
// later) from the counter. The counter moves in steps of about 100 ms, so one 140 ms window is
// coarse; over the steady steps together the counter's power agrees with the sampled power.
TEST(TrainCli, EachStepRecordsItsEnergy) {
  UB_REQUIRE_GPU();
  const std::string out = temp_path("train_energy");
  const CliRun r = run("train --model llama-3.1-8b --layers 2 --seqlen 16k --steps 6 --warmup 2 --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  size_t steps = 0;
  double joules = 0, window = 0, sampled = 0, limit = 0;
  for (const auto& rec : json_lines(r.out)) {
    if (rec["type"] != "train_step" || rec["warmup"].get<bool>()) continue;
    ++steps;
    const auto& t = rec["telemetry"];
    ASSERT_TRUE(t["available"].get<bool>()) << "NVML is on the GPU machines";
    ASSERT_TRUE(t.contains("energy_j")) << t.dump();
    EXPECT_EQ(t["energy_source"], "NVML energy counter") << t.dump();
    ASSERT_GT(t["window_s"].get<double>(), 0.05) << t.dump();
    joules += t["energy_j"].get<double>(), window += t["window_s"].get<double>();
    sampled += t["power_w"]["mean"].get<double>(), limit = t["power_w"]["limit"].get<double>();
  }
  ASSERT_EQ(steps, 6u);
  const double counter_w = joules / window, sampled_w = sampled / static_cast<double>(steps);
  EXPECT_GT(counter_w, 100);
  EXPECT_LT(counter_w, 1.1 * limit);
  EXPECT_NEAR(counter_w, sampled_w, 0.15 * sampled_w) << "counter " << counter_w << " W, samples " << sampled_w << " W";
  std::filesystem::remove(out);
}

TEST(TrainCli, OutOfMemoryIsARecordAndExitCode3) {
  UB_REQUIRE_GPU();
  const std::string out = temp_path("train-oom");
  const CliRun r = run("train --model llama-3.1-70b --seqlen 4k --steps 1 --warmup 0 --out " + out);
  EXPECT_EQ(r.code, 3) << r.out;
  const auto recs = json_lines(r.out);
  ASSERT_EQ(recs.size(), 2u) << r.out;
  EXPECT_EQ(recs[1]["type"], "train_oom");
  EXPECT_EQ(recs[1]["seqlen"], 4096);
  EXPECT_NE(recs[1]["what"].get<std::string>().find("arena"), std::string::npos);
  std::filesystem::remove(out);
}

// A sweep over a model that fits nowhere: every point is an out-of-memory record, the sweep goes
// on and exits 0, and --find-max halves down to its granularity and says nothing fitted.
TEST(SweepCli, OutOfMemoryPointsAreRecordedAndFindMaxHalves) {
  UB_REQUIRE_GPU();
  const std::string out = temp_path("sweep-oom");
  const CliRun r = run("sweep --model llama-3.1-70b --seqlens 4k --find-max --find-max-granularity 1k --steps 1 "
                       "--warmup 0 --json --out " + out);
  EXPECT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["points"].size(), 3u) << r.out;  // 4096, then 2048 and 1024
  for (const auto& p : j["points"]) EXPECT_EQ(p["outcome"], "out of memory");
  EXPECT_TRUE(j["longest_fit"].is_null());
  std::filesystem::remove(out);
}

}  // namespace
