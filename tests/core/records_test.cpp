// The record writer: appends, one line per record, every line on disk before write() returns.
#include "core/records.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "core/error.hpp"
#include "core/telemetry.hpp"

namespace ub {
namespace {

std::vector<nlohmann::json> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(Records, EachRecordIsOnDiskAtOnceAndFilesAreAppended) {
  const std::string path = ::testing::TempDir() + "/records_test.jsonl";
  std::remove(path.c_str());
  {
    RecordWriter w(path);
    w.write(make_context_record("mamf", {"upgradebench", "mamf"}, {{"gpus", nlohmann::json::array()}},
                                {{"dtype", "bf16"}}));
    EXPECT_EQ(read_lines(path).size(), 1u);  // readable while the writer is still open
    w.write({{"type", "mamf"}, {"m", 1}});
    EXPECT_EQ(read_lines(path).size(), 2u);
  }
  {
    RecordWriter w(path);
    w.write({{"type", "mamf"}, {"m", 2}});
  }
  const auto lines = read_lines(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["type"], "context");
  EXPECT_EQ(lines[0]["schema"], kRecordSchema);
  EXPECT_EQ(lines[0]["command"], "mamf");
  EXPECT_EQ(lines[0]["config"]["dtype"], "bf16");
  EXPECT_TRUE(lines[0].contains("gpus"));
  EXPECT_EQ(lines[0]["date"].get<std::string>().size(), 20u);
  EXPECT_EQ(lines[2]["m"], 2);
}

TEST(Records, UnwritablePathIsAnError) {
  EXPECT_THROW(RecordWriter("/nonexistent/dir/records.jsonl"), WorkError);
}

TEST(Telemetry, ThrottleReasonsAndSummary) {
  EXPECT_EQ(clock_reason_names(0x4 | 0x40), (std::vector<std::string>{"sw_power_cap", "hw_thermal"}));
  const TelemetrySummary t = TelemetrySummary::of(
      {{1980, 2619, 650, 60, 0}, {1755, 2619, 700, 66, clock_reason::sw_power_cap}}, 700);
  EXPECT_TRUE(t.throttled());
  EXPECT_DOUBLE_EQ(t.sm_clock_min, 1755);
  EXPECT_DOUBLE_EQ(t.sm_clock_mean, (1980 + 1755) / 2.0);
  EXPECT_DOUBLE_EQ(t.power_max_w, 700);
  const auto j = t.to_json();
  EXPECT_EQ(j["throttled"], true);
  EXPECT_EQ(j["clock_event_reasons"][0], "sw_power_cap");
  const TelemetrySummary idle = TelemetrySummary::of({{345, 3201, 80, 30, clock_reason::gpu_idle}}, 700);
  EXPECT_FALSE(idle.throttled());
  EXPECT_EQ(TelemetrySummary{}.to_json()["available"], false);
}

}  // namespace
}  // namespace ub
