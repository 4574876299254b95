// The record layer: the writer appends whole lines (and repairs a line a hard stop cut short),
// every typed record reads back what was written, and a record of the wrong shape is an error
// naming the file, the line and the field.
#include <gtest/gtest.h>

#include <fstream>

#include "base/error.hpp"
#include "records/attention_records.hpp"
#include "records/context_record.hpp"
#include "records/mamf_records.hpp"
#include "records/record_file.hpp"
#include "records/telemetry.hpp"
#include "records/train_records.hpp"

namespace ub {
namespace {

using nlohmann::json;

std::vector<json> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<json> out;
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

std::string fresh(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::remove(path.c_str());
  return path;
}

TEST(Records, EachRecordIsOnDiskAtOnceAndFilesAreAppended) {
  const std::string path = fresh("records_test.jsonl");
  {
    RecordWriter w(path);
    w.write(make_context("mamf", {"upgradebench", "mamf"}, {}, {{"dtype", "bf16"}}));
    EXPECT_EQ(read_lines(path).size(), 1u);  // readable while the writer is still open
    w.write({{"type", "mamf"}, {"m", 1}});
    EXPECT_EQ(read_lines(path).size(), 2u);
    w.sync();
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

TEST(Records, ALineCutShortByAHardStopDoesNotSwallowTheNextRecord) {
  const std::string path = fresh("records_cut.jsonl");
  {
    std::ofstream out(path);
    out << "{\"type\": \"context\"}\n{\"type\": \"train_st";  // killed mid-write
  }
  RecordWriter(path).write({{"type", "train_step"}, {"step", 1}});
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "{\"type\": \"train_st");
  EXPECT_EQ(json::parse(lines[2])["step"], 1);
}

TEST(Records, UnwritablePathIsAnError) {
  EXPECT_THROW(RecordWriter("/nonexistent/dir/records.jsonl"), WorkError);
}

TEST(Records, ContextRoundTripsWithItsFingerprint) {
  Fingerprint fp;
  GpuFacts g;
  g.index = 1;
  g.name = "NVIDIA H200";
  g.uuid = "GPU-1";
  g.sm_count = 132;
  g.power_limit_w = 700;
  g.catalog_id = "h200-sxm";
  fp.gpus.push_back(g);
  fp.stack["cudnn"] = {"9.19.0", "/lib/libcudnn.so.9", ""};
  fp.stack["nccl"] = {std::nullopt, "", "libnccl.so.2 not found"};
  fp.stack["torch"].version = "2.11.0";
  fp.build["type"] = "Release";
  const ContextRecord c = make_context("train", {"upgradebench", "train"}, fp, {{"model", "llama-3.1-8b"}});
  const json j = c;
  EXPECT_EQ(j["stack"]["torch"], "2.11.0");  // a plain version is a string, as peers write it
  EXPECT_TRUE(j["stack"]["nccl"]["version"].is_null());
  const ContextRecord back = read_context(Fields(j, "t:1"));
  EXPECT_EQ(back.command, "train");
  EXPECT_EQ(back.first_gpu("t:1").name, "NVIDIA H200");
  EXPECT_EQ(back.first_gpu("t:1").sm_count, 132);
  EXPECT_EQ(back.first_gpu("t:1").catalog_id, "h200-sxm");
  EXPECT_EQ(back.fingerprint.stack.at("cudnn").path, "/lib/libcudnn.so.9");
  EXPECT_EQ(back.fingerprint.stack.at("nccl").absent, "libnccl.so.2 not found");
  EXPECT_EQ(back.config["model"], "llama-3.1-8b");
  EXPECT_THROW((void)ContextRecord{}.first_gpu("t:1"), WorkError);
}

TEST(Records, TrainStepRoundTripsAndRefusesBadTimes) {
  TrainStep s;
  s.seqlen = 8192, s.step = 3, s.exec_time_ms = 120.5, s.tflops = 580, s.loss = 2.5;
  TelemetrySummary t;
  t.available = true, t.samples = 4, t.reasons = clock_reason::sw_power_cap;
  s.telemetry = t;
  const json j = s;
  EXPECT_EQ(j["type"], "train_step");
  EXPECT_TRUE(j["mfu"].is_null());
  const TrainStep back = read_train_step(Fields(j, "t:2"), 0);
  EXPECT_EQ(back.step, 3);
  EXPECT_DOUBLE_EQ(back.exec_time_ms, 120.5);
  EXPECT_EQ(back.tflops, 580);
  EXPECT_TRUE(back.telemetry->throttled());
  json bad = j;
  bad["exec_time_ms"] = -1;
  try {
    (void)read_train_step(Fields(bad, "run.jsonl:7"), 0);
    FAIL() << "a negative step time was read";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("run.jsonl:7: exec_time_ms must be a finite number of at least 1e-06 ms, got -1"),
              std::string::npos)
        << e.what();
  }
  // Below a nanosecond, or a number written in hexadecimal: a damaged record, not a fast step.
  for (const json& v : {json(1e-300), json("1e-300"), json("0x10"), json("nan")}) {
    bad = j;
    bad["exec_time_ms"] = v;
    EXPECT_THROW((void)read_train_step(Fields(bad, "run.jsonl:8"), 0), WorkError) << v;
  }
  // benchmark.py writes numbers as strings, padded or not; our records never do, nor a null step
  // or warm-up, nor a number where the warm-up's boolean goes.
  bad = j;
  bad["exec_time_ms"] = " 120.5 ";
  EXPECT_DOUBLE_EQ(read_train_step(Fields(bad, "run.jsonl:9"), 0, false).exec_time_ms, 120.5);
  EXPECT_THROW((void)read_train_step(Fields(bad, "run.jsonl:9"), 0), WorkError);
  for (const auto& [key, v] : {std::pair{"step", json()}, {"warmup", json()}, {"warmup", json(0)}, {"warmup", json("false")}}) {
    bad = j;
    bad[key] = v;
    EXPECT_THROW((void)read_train_step(Fields(bad, "run.jsonl:10"), 0), WorkError) << key << " " << v;
  }
  // Left out, a warm-up would count as a steady step.
  bad = j;
  bad.erase("warmup");
  EXPECT_THROW((void)read_train_step(Fields(bad, "run.jsonl:11"), 0), WorkError);
  EXPECT_FALSE(read_train_step(Fields(bad, "sweep.log:11"), 0, false).warmup);
  bad = j;
  bad["warmup"] = 0;
  EXPECT_FALSE(read_train_step(Fields(bad, "sweep.log:10"), 0, false).warmup);
  bad = j;
  bad["step"] = 1.5;
  EXPECT_THROW((void)read_train_step(Fields(bad, "t:3"), 0), WorkError);
}

// A step of several GPUs: the world, the slowest rank and the exposed communication and offload
// travel with it; one GPU's step carries none of them; a negative exposed time is refused.
TEST(Records, ADataParallelStepCarriesItsWorldAndExposedCommunication) {
  TrainStep s;
  s.seqlen = 16384, s.exec_time_ms = 900, s.world_size = 2, s.slowest_rank = 1, s.exposed_comm_ms = 12.5;
  s.exposed_offload_ms = 40;
  const json j = s;
  EXPECT_EQ(j["world_size"], 2);
  const TrainStep back = read_train_step(Fields(j, "t:1"), 0);
  EXPECT_EQ(back.world_size, 2);
  EXPECT_EQ(back.slowest_rank, 1);
  EXPECT_EQ(back.exposed_comm_ms, 12.5);
  EXPECT_EQ(back.exposed_offload_ms, 40);
  TrainStep one;
  one.seqlen = 8, one.exec_time_ms = 1;
  const json k = one;
  EXPECT_FALSE(k.contains("world_size"));
  EXPECT_FALSE(k.contains("exposed_comm_ms"));
  json bad = j;
  bad["exposed_comm_ms"] = -3;
  EXPECT_THROW((void)read_train_step(Fields(bad, "t:4"), 0), WorkError);
  TrainMemory m{16384, 0, "forward", {1, 2, 3, 4}, 1};
  EXPECT_EQ(json(m)["rank"], 1);
}

TEST(Records, MamfShapeAndAttentionPointRoundTrip) {
  MamfShape m;
  m.m = 4096, m.n = 8192, m.k = 13312, m.ok = true, m.dtype = "bf16";
  m.mean_tflops = 700, m.median_tflops = 710, m.max_tflops = 720;
  m.time = TimeStats{summarize({1.0, 1.1, 1.2}), "noise"};
  const MamfShape mb = read_mamf_shape(Fields(json(m), "t:1"));
  EXPECT_TRUE(mb.ok);
  EXPECT_EQ(mb.shape(), "4096x8192x13312");
  EXPECT_DOUBLE_EQ(mb.median_tflops, 710);
  EXPECT_EQ(mb.time->stop, "noise");
  EXPECT_DOUBLE_EQ(mb.time->ms.median, 1.1);

  AttentionRecord a;
  a.seqlen = 16384, a.ok = true, a.fwd_ms = 2.0, a.fwd_tflops = 550, a.fwd_bwd_ms = 7.0, a.fwd_bwd_tflops = 540;
  AttentionCheck c;
  for (const char* t : {"O", "LSE", "dQ", "dK", "dV"}) c.tensors.push_back({t, 1e-6, 0.01, 3.0, 1e-3, 0});
  a.check = c;
  const json aj = a;
  EXPECT_TRUE(aj["check"]["ok"].get<bool>());
  const AttentionRecord ab = read_attention_point(Fields(aj, "t:1"));
  EXPECT_EQ(ab.seqlen, 16384);
  EXPECT_DOUBLE_EQ(*ab.fwd_bwd_tflops, 540);
  EXPECT_EQ(flash_attn_line(ab)["fwd_tflops"], 550);
  a.oom = true, a.ok = false, a.error = "out of memory";
  EXPECT_EQ(json(a)["type"], "attention_oom");
}

TEST(Records, ATimeSummaryOutOfOrderIsRefused) {
  MamfShape m;
  m.m = m.n = m.k = 1024, m.ok = true, m.dtype = "bf16", m.median_tflops = 700;
  m.time = TimeStats{summarize({1.0, 1.1, 1.2, 1.3}), "noise"};
  json j = m;
  EXPECT_NO_THROW((void)read_mamf_shape(Fields(j, "t:1")));
  j["time_ms"]["median"] = 2.0;  // above its maximum: every interval read from it would be upside down
  try {
    (void)read_mamf_shape(Fields(j, "mamf.jsonl:9"));
    FAIL() << "a median above the maximum was read";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("mamf.jsonl:9: time summary out of order"), std::string::npos) << e.what();
  }
  j = m;
  j["time_ms"]["stddev"] = -0.1;
  EXPECT_THROW((void)read_mamf_shape(Fields(j, "t:2")), WorkError);
}

TEST(Records, FieldsNameWhereAndWhat) {
  const json j = {{"seqlen", "8k"}, {"n", -3}};
  const Fields f(j, "file.jsonl:4");
  try {
    (void)f.count("seqlen");
    FAIL();
  } catch (const WorkError& e) {
    EXPECT_STREQ(e.what(), "file.jsonl:4: record has no numeric \"seqlen\"");
  }
  EXPECT_THROW((void)f.count("n"), WorkError);
  EXPECT_FALSE(f.optional_number("absent").has_value());
  EXPECT_THROW(Fields(json::array(), "x:1"), WorkError);
}

TEST(Records, DamagedLinesAnywhereAreSkippedAndNamed) {
  std::vector<std::string> warnings;
  int seen = 0;
  // A line cut short by a hard stop in the middle (the next record appended after it), a value
  // nested too deep, and the truncated last line of a file still being written.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for_each_record(LineSource::text("{\"type\": \"a\"}\n{\"type\": \"x\", \"st\n{\"type\": \"b\"}\n" + deep +
                                      "\n{\"type\": \"c", "f"),
                  [&](const RecordLine& r) { seen += r.type == "a" || r.type == "b"; }, warnings);
  EXPECT_EQ(seen, 2);
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_NE(warnings[0].find("f:2: a damaged line skipped"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("f:4: a damaged line skipped"), std::string::npos) << warnings[1];
  EXPECT_NE(warnings[1].find("nested deeper than 64 levels"), std::string::npos) << warnings[1];
  EXPECT_NE(warnings[2].find("f:5: truncated last line"), std::string::npos) << warnings[2];
}

TEST(Telemetry, ThrottleReasonsAndSummary) {
  EXPECT_EQ(clock_reason_names(0x4 | 0x40), (std::vector<std::string>{"sw_power_cap", "hw_thermal"}));
  EXPECT_EQ(clock_reason_mask({"sw_power_cap", "hw_thermal", "unknown"}), uint64_t{0x4 | 0x40});
  const TelemetrySummary t = TelemetrySummary::of(
      {{1980, 2619, 650, 60, 0}, {1755, 2619, 700, 66, clock_reason::sw_power_cap}}, 700);
  EXPECT_TRUE(t.throttled());
  EXPECT_DOUBLE_EQ(t.sm_clock_min, 1755);
  EXPECT_DOUBLE_EQ(t.sm_clock_mean, (1980 + 1755) / 2.0);
  EXPECT_DOUBLE_EQ(t.power_max_w, 700);
  const auto j = t.to_json();
  EXPECT_EQ(j["throttled"], true);
  EXPECT_EQ(j["clock_event_reasons"][0], "sw_power_cap");
  const TelemetrySummary back = read_telemetry(Fields(j, "t:1"));
  EXPECT_DOUBLE_EQ(back.sm_clock_min, 1755);
  EXPECT_TRUE(back.throttled());
  // Energy: the sampled power integrated over the samples' times (trapezoids), kept in the record.
  const TelemetrySummary timed = TelemetrySummary::of({{1980, 2619, 600, 60, 0, 0.0}, {1980, 2619, 700, 60, 0, 0.1},
                                                       {1980, 2619, 700, 60, 0, 0.3}}, 700);
  EXPECT_DOUBLE_EQ(timed.window_s, 0.3);
  ASSERT_TRUE(timed.energy_j);
  EXPECT_NEAR(*timed.energy_j, 650 * 0.1 + 700 * 0.2, 1e-12);
  EXPECT_EQ(timed.energy_source, kEnergyFromPower);
  EXPECT_NEAR(timed.mean_power_w(), (65.0 + 140.0) / 0.3, 1e-9);
  const TelemetrySummary timed_back = read_telemetry(Fields(timed.to_json(), "t:2"));
  EXPECT_DOUBLE_EQ(*timed_back.energy_j, *timed.energy_j);
  EXPECT_EQ(timed_back.energy_source, kEnergyFromPower);
  EXPECT_FALSE(t.energy_j) << "two samples at one instant: no window, no energy";
  const TelemetrySummary idle = TelemetrySummary::of({{345, 3201, 80, 30, clock_reason::gpu_idle}}, 700);
  EXPECT_FALSE(idle.throttled());
  EXPECT_EQ(TelemetrySummary{}.to_json()["available"], false);
}

}  // namespace
}  // namespace ub
