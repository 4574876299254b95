// What the history keeps of a file and computes from it, without a database: runs split at their
// context records, keys, figures with their intervals, version order, trends and fleets.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/history/fleet.hpp"
#include "analysis/history/stored_run.hpp"
#include "analysis/history/trend.hpp"
#include "analysis/history/workload.hpp"
#include "base/error.hpp"

namespace ub {
namespace {

const std::string kFixtures = UB_FIXTURES_DIR;
const std::string kExamples = std::string(UB_DATA_DIR) + "/examples";

const MetricPoint* find_metric(const StoredRun& run, const std::string& metric, double x, int gpu = 0) {
  for (const MetricPoint& m : run.metrics) {
    if (m.metric == metric && m.x == x && m.gpu == gpu) return &m;
  }
  return nullptr;
}

// Lines a test edited, as a file of them reads.
LineSource in_memory(const std::vector<std::string>& lines) { return LineSource::lines(lines, false, "edited.log"); }

TEST(HistoryRuns, ASweepFileIsOneRunPerContextRecord) {
  const std::vector<std::string> t = LineSource::file(kExamples + "/sweep_h200_llama-3.1-8b-4layers.jsonl").read_all();
  const std::vector<StoredRun> runs = runs_of_file(in_memory(t));
  ASSERT_EQ(runs.size(), 10u);
  size_t lines = 0;
  for (const StoredRun& r : runs) {
    EXPECT_EQ(r.format, "upgradebench");
    EXPECT_EQ(r.command, "train");
    EXPECT_EQ(r.kind, "training");
    EXPECT_EQ(r.model, "llama-3.1-8b");
    ASSERT_FALSE(r.gpus.empty());
    EXPECT_EQ(r.gpus[0].name, "NVIDIA H200");
    EXPECT_FALSE(r.gpus[0].uuid.empty());
    EXPECT_EQ(r.key.size(), 16u);
    EXPECT_TRUE(r.stack.count("cublaslt")) << "the context's stack is kept";
    lines += r.lines.size();
  }
  EXPECT_EQ(lines, t.size()) << "every line belongs to one run";
  EXPECT_NE(runs[0].key, runs[1].key);
  EXPECT_EQ(runs_of_file(in_memory(t))[3].key, runs[3].key) << "keys are stable";
}

// What a series may pool a run with: the workload, from our context record and from benchmark.py's
// header alike; the guide's logs are jobs of 8 GPUs that name one.
TEST(HistoryRuns, EachRunSaysItsWorkload) {
  const std::vector<StoredRun> ours = runs_of_file(LineSource::file(kExamples + "/sweep_h200_llama-3.1-8b-4layers.jsonl"));
  EXPECT_EQ(ours[0].workload.rfind("llama-3.1-8b, 4 of 32 layers, 1 GPU, ZeRO-0, checkpointing, ", 0), 0u) << ours[0].workload;
  EXPECT_EQ(ours[0].world_size, 1);
  const std::vector<StoredRun> zero3 = runs_of_file(LineSource::file(kFixtures + "/train_records_h200_zero3.jsonl"));
  EXPECT_NE(zero3[0].workload.find("ZeRO-3"), std::string::npos) << zero3[0].workload;
  EXPECT_NE(zero3[0].workload, ours[0].workload);
  const std::vector<StoredRun> guide = runs_of_file(LineSource::file(kFixtures + "/sweep_h200.log"));
  ASSERT_EQ(guide.size(), 1u);
  EXPECT_EQ(guide[0].world_size, 8);
  EXPECT_EQ(guide[0].workload, "llama-3.1-8b, all layers, 8 GPUs, ZeRO-3, checkpointing, offloaded optimizer, bf16, batch 1");
  const std::vector<StoredRun> attention = runs_of_file(LineSource::file(kFixtures + "/attention_records_h200.jsonl"));
  EXPECT_EQ(attention[0].workload, "32 heads (8 KV) of 128, batch 1, causal, bf16");
}

// Attention over packed documents, or in a sliding window, computes far less than full attention
// at the same length: its runs are another series, whatever the heads.
TEST(HistoryRuns, AttentionWorkloadNamesItsWindowAndPackedDocuments) {
  nlohmann::json config = {{"heads", 32}, {"kv_heads", 8}, {"head_dim", 128}, {"batch", 1}, {"causal", true},
                           {"dtype", "bf16"}, {"doc_len", 0}, {"docs", nlohmann::json::array()}, {"window", 0}};
  const std::string full = workload_of_records("attention", config, nlohmann::json()).text;
  EXPECT_EQ(full, "32 heads (8 KV) of 128, batch 1, causal, bf16");
  config["doc_len"] = 2048;
  EXPECT_EQ(workload_of_records("attention", config, nlohmann::json()).text,
            "32 heads (8 KV) of 128, batch 1, causal, packed documents of 2048, bf16");
  config["doc_len"] = 0;
  config["docs"] = {3000, 1096};
  EXPECT_EQ(workload_of_records("attention", config, nlohmann::json()).text,
            "32 heads (8 KV) of 128, batch 1, causal, packed documents [3000,1096], bf16");
  config["docs"] = nlohmann::json::array();
  config["window"] = 4096;
  EXPECT_EQ(workload_of_records("attention", config, nlohmann::json()).text,
            "32 heads (8 KV) of 128, batch 1, causal, window 4096, bf16");
}

TEST(HistoryRuns, TrainingFiguresAreTheSteadyStepsMedianWithItsInterval) {
  const std::vector<std::string> t = LineSource::file(kFixtures + "/torch_versions/h200_torch2.12.0_cu130.log").read_all();
  const std::vector<StoredRun> runs = runs_of_file(in_memory(t));
  ASSERT_EQ(runs.size(), 1u);
  const StoredRun& r = runs[0];
  EXPECT_EQ(r.format, "benchmark.py");
  EXPECT_EQ(r.stack.at("torch"), "2.12.0");
  EXPECT_EQ(r.stack.at("cuda"), "13.0");
  EXPECT_EQ(r.date, "2026-11-22T09:00:00");
  const MetricPoint* m = find_metric(r, "train.tflops", 8192);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->n, 6u) << "warm-up steps left out";
  EXPECT_DOUBLE_EQ(m->median, 140.1);
  EXPECT_LE(m->low, 140.0);
  EXPECT_GE(m->high, 140.2);
  EXPECT_GE(m->low, 139.8);
  ASSERT_NE(find_metric(r, "train.step_ms", 8192), nullptr);
}

// A peer's log is keyed by what it measured: a step line edited is another run; a dated line or
// a `#` header edited (a copy moved to another day, another host) is the same one.
TEST(HistoryRuns, PeerLogsAreKeyedByWhatTheyMeasured) {
  const std::vector<std::string> a = LineSource::file(kFixtures + "/torch_versions/h200_torch2.12.0_cu130.log").read_all();
  const std::string key = runs_of_file(in_memory(a))[0].key;
  std::vector<std::string> dated = a;
  dated.back() = "[2026-11-23 10:00:00] INFO deepspeed: step done";
  EXPECT_EQ(runs_of_file(in_memory(dated))[0].key, key);
  std::vector<std::string> step = a;
  step[step.size() - 2] += " ";
  EXPECT_NE(runs_of_file(in_memory(step))[0].key, key);
}

// A peer's log read a line at a time (compare telling two inputs of one measurement apart) has the
// key and figures `history add` gives it, blank lines at its ends and within included.
TEST(HistoryRuns, APeersLogStreamedHasTheKeyAndFiguresItIsStoredWith) {
  for (const std::string name : {"/attention_h200.log", "/torch_versions/h200_torch2.12.0_cu130.log", "/nccl_peer_h200x2.jsonl"}) {
    std::vector<std::string> lines = LineSource::file(kFixtures + name).read_all();
    lines.insert(lines.begin(), "  ");
    lines.insert(lines.begin() + 3, "");
    lines.push_back("\t");
    const StoredRun stored = runs_of_file(in_memory(lines))[0];
    const PeerFigures streamed = peer_figures(in_memory(lines));
    EXPECT_EQ(streamed.key, stored.key) << name;
    ASSERT_EQ(streamed.metrics.size(), stored.metrics.size()) << name;
    for (size_t i = 0; i < stored.metrics.size(); ++i) EXPECT_EQ(streamed.metrics[i].median, stored.metrics[i].median) << name;
  }
}

TEST(HistoryRuns, MamfRecordsGiveEachGpusBestShape) {
  const std::vector<StoredRun> runs = runs_of_file(LineSource::file(kFixtures + "/mamf_records_h200_a.jsonl"));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].kind, "mamf");
  ASSERT_FALSE(runs[0].metrics.empty());
  const MetricPoint& m = runs[0].metrics[0];
  EXPECT_EQ(m.metric.rfind("mamf.tflops.", 0), 0u) << m.metric;
  EXPECT_GT(m.median, 100);
  EXPECT_LE(m.low, m.median);
  EXPECT_GE(m.high, m.median);
}

TEST(HistoryRuns, MamfFinderOutputIsOnePeerRun) {
  const std::vector<StoredRun> runs = runs_of_file(LineSource::file(kFixtures + "/mamf_finder_real_h200.txt"));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].format, "mamf-finder.py");
  EXPECT_EQ(runs[0].metrics.size(), 1u);
  ASSERT_FALSE(runs[0].gpus.empty());
  EXPECT_FALSE(runs[0].gpus[0].uuid.empty()) << "the device line's UUID";
}

TEST(HistoryRuns, CollectiveRecordsGiveBusbwPerSize) {
  const std::vector<StoredRun> runs = runs_of_file(LineSource::file(kFixtures + "/nccl_records_h200x2_plain.jsonl"));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].kind, "nccl");
  bool any = false;
  for (const MetricPoint& m : runs[0].metrics) {
    any = any || m.metric.rfind("nccl.busbw.all_reduce.", 0) == 0;
    EXPECT_GT(m.x, 0);
  }
  EXPECT_TRUE(any);
}

TEST(HistoryRuns, ARateWhoseTimeIntervalEndsAtItsMedianKeepsTheRateInsideItsInterval) {
  // A record whose time summary has no median_low (or one equal to its median): the rate's high
  // end is rate * median / median, which rounds away from the rate for some rates. Found by the
  // history_runs fuzzer with a busbw of 217.61527565500366. The record stays one measurement:
  // its times scaled with the rate, its algbw twice its busbw (a reduce_scatter on 2 ranks).
  nlohmann::json base = nlohmann::json::parse(LineSource::file(kFixtures + "/nccl_records_h200x2_plain.jsonl").read_all().back());
  base["time_ms"].erase("median_low");
  const double busbw = base["busbw_gbps"].get<double>();
  int checked = 0;
  for (int k = 0; k < 2000; ++k) {
    const double rate = 217.61527565500366 + k * 0.0137;
    nlohmann::json edited = base;
    edited["busbw_gbps"] = rate;
    edited["algbw_gbps"] = 2 * rate;
    for (auto& [key, v] : edited["time_ms"].items()) {
      if (key != "n" && v.is_number_float()) v = v.get<double>() * busbw / rate;
    }
    edited["time_us"] = base["time_us"].get<double>() * busbw / rate;
    for (const StoredRun& r : runs_of_file(in_memory({edited.dump()}))) {
      for (const MetricPoint& m : r.metrics) {
        ASSERT_LE(m.low, m.median) << edited.dump();
        ASSERT_LE(m.median, m.high) << edited.dump();
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 2000);
}

TEST(HistoryRuns, AFileNoReaderKnowsIsRefusedByName) {
  const LineSource t = LineSource::text("hello\nworld\n", "notes.txt");
  try {
    runs_of_file(t);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {  // a file of another kind: exit 2
    EXPECT_NE(std::string(e.what()).find("notes.txt"), std::string::npos) << e.what();
  }
  // An empty file is no log of any kind either (exit 2, as every command says of it).
  EXPECT_THROW(runs_of_file(LineSource::text("\n\n", "empty.log")), UsageError);
}

TEST(HistoryRuns, RecordsWrittenSoFarAreARun) {
  const std::vector<std::string> t = LineSource::file(kExamples + "/sweep_h200_llama-3.1-8b-4layers.jsonl").read_all();
  const std::vector<std::string> first(t.begin(), t.begin() + 2);
  const StoredRun r = run_of_records(first, "x.jsonl");
  EXPECT_EQ(r.key, runs_of_file(in_memory(t))[0].key) << "the key is the context's: the same as the run grows";
  EXPECT_THROW(run_of_records({t[1]}, "x.jsonl"), WorkError) << "a run starts with its context";
}

TEST(HistoryVersions, NumbersCompareAsNumbers) {
  EXPECT_TRUE(version_less("2.9.0", "2.10.0"));
  EXPECT_FALSE(version_less("2.10.0", "2.9.0"));
  EXPECT_TRUE(version_less("2.10.0", "2.10.1"));
  EXPECT_TRUE(version_less("12.9", "13.0"));
  EXPECT_FALSE(version_less("2.12.0", "2.12.0"));
  EXPECT_TRUE(version_less("2.12.0", "2.12.0+cu130"));
  EXPECT_TRUE(version_less("2.12.0a", "2.12.0b"));
  EXPECT_TRUE(version_less("2.09", "2.10")) << "leading zeros";
}

TEST(HistoryIntervals, PoolingAndChange) {
  const Estimate a{100, 98, 102, 5}, b{110, 108, 113, 5};
  const Estimate p = pooled({a, b});
  EXPECT_DOUBLE_EQ(p.median, 105);
  EXPECT_DOUBLE_EQ(p.low, 98);
  EXPECT_DOUBLE_EQ(p.high, 113);
  EXPECT_EQ(p.n, 10u);
  const Change c = change_between(a, b);
  EXPECT_NEAR(c.change, 0.10, 1e-12);
  EXPECT_NEAR(c.low, 108.0 / 102 - 1, 1e-12);
  EXPECT_NEAR(c.high, 113.0 / 98 - 1, 1e-12);
  EXPECT_TRUE(c.significant());
  EXPECT_FALSE(change_between(a, Estimate{101, 97, 104, 5}).significant());
  EXPECT_THROW(pooled({}), std::invalid_argument);
}

TEST(HistoryTrend, GroupsByVersionInVersionOrder) {
  std::vector<TrendRun> runs = {
      {1, "2026-11-23", "2.12.0", "H200", "a", {140.1, 139.8, 140.4, 6}, "w", false},
      {2, "2026-11-20", "2.9.0", "H200", "a", {110, 109, 111, 6}, "w", false},
      {3, "2026-11-21", "2.11.0", "H200", "a", {120.5, 120.2, 120.8, 6}, "w", false},
      {4, "2026-11-24", "2.12.0", "H200", "b", {139.9, 139.5, 140.3, 6}, "w", false},
  };
  const Trend t = trend_of("train.tflops", 8192, "torch", runs);
  ASSERT_EQ(t.groups.size(), 3u);
  EXPECT_EQ(t.groups[0].label, "2.9.0");
  EXPECT_EQ(t.groups[1].label, "2.11.0");
  EXPECT_EQ(t.groups[2].label, "2.12.0");
  EXPECT_EQ(t.groups[2].run_ids.size(), 2u);
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_NEAR(t.steps[1].change.change, 140.0 / 120.5 - 1, 1e-9);
  EXPECT_TRUE(t.steps[1].change.significant());
  ASSERT_TRUE(t.overall);
  EXPECT_EQ(t.overall->from, "2.9.0");
  EXPECT_EQ(t.runs.front().run_id, 2) << "runs in date order";
  const Trend by_date = trend_of("train.tflops", 8192, "", runs);
  EXPECT_EQ(by_date.groups.size(), 4u);
  EXPECT_EQ(by_date.groups[0].label, "2026-11-20");
}

// The GPUs of one run are one point in time: pooled into one group, with no change between them,
// over time as by version; the run is counted once.
TEST(HistoryTrend, TheGpusOfOneRunAreOneGroup) {
  const std::vector<TrendRun> runs = {
      {2, "2026-11-30", "2.11.0", "H200", "a", {795.9, 794.7, 798.0, 5}, "w", false},
      {2, "2026-11-30", "2.11.0", "H200", "a", {801.9, 799.5, 803.9, 5}, "w", false},
      {1, "2026-11-29", "2.10.0", "H200", "b", {700, 699, 701, 5}, "w", false},
  };
  const Trend by_date = trend_of("mamf.tflops.bf16", 0, "", runs);
  ASSERT_EQ(by_date.groups.size(), 2u);
  EXPECT_EQ(by_date.groups[1].run_ids, std::vector<int64_t>{2});
  EXPECT_NEAR(by_date.groups[1].figure.low, 794.7, 1e-9);
  EXPECT_NEAR(by_date.groups[1].figure.high, 803.9, 1e-9);
  ASSERT_EQ(by_date.steps.size(), 1u) << "one step, from run 1 to run 2";
  EXPECT_EQ(by_date.steps[0].from, "2026-11-29");
  const Trend by_version = trend_of("mamf.tflops.bf16", 0, "torch", runs);
  ASSERT_EQ(by_version.groups.size(), 2u);
  EXPECT_EQ(by_version.groups[1].run_ids, std::vector<int64_t>{2});
  const Trend one_run = trend_of("mamf.tflops.bf16", 0, "", {runs[0], runs[1]});
  EXPECT_EQ(one_run.groups.size(), 1u);
  EXPECT_TRUE(one_run.steps.empty());
}

TEST(HistoryTrend, LowerIsBetterForTimes) {
  const Trend t = trend_of("train.step_ms", 8192, "", {{1, "d1", "", "", "", {100, 99, 101, 5}, "w", false}});
  EXPECT_FALSE(t.higher_is_better);
  EXPECT_EQ(t.unit, "ms");
  EXPECT_TRUE(t.steps.empty());
  EXPECT_FALSE(t.overall);
}

// A B200's run and a 32-layer 8-GPU job's are not steps of an H200's 4-layer trend: each series is
// one GPU model and one workload, the largest first, and a series of one run has no step.
TEST(HistoryTrend, UnlikeRunsAreSeparateSeries) {
  const std::string small = "llama-3.1-8b, 4 of 32 layers, 1 GPU, ZeRO-0, bf16, batch 1";
  const std::string big = "llama-3.1-8b, all layers, 8 GPUs, ZeRO-3, checkpointing, offloaded optimizer, bf16, batch 1";
  const std::vector<TrendRun> runs = {
      {1, "2026-11-20", "2.11.0", "NVIDIA H200", "a", {560, 559, 561, 6}, small, false},
      {2, "2026-11-21", "2.12.0", "NVIDIA H200", "a", {565, 564, 566, 6}, small, false},
      {3, "2026-11-22", "2.12.0", "NVIDIA H200", "b", {140, 139, 141, 6}, big, true},
      {4, "2026-11-23", "2.13.0", "NVIDIA B200", "c", {1200, 1190, 1210, 6}, small, false},
  };
  const std::vector<Trend> series = trends_of("train.tflops", 8192, "torch", runs);
  ASSERT_EQ(series.size(), 3u);
  EXPECT_EQ(series[0].gpu, "NVIDIA H200");
  EXPECT_EQ(series[0].workload, small);
  ASSERT_EQ(series[0].runs.size(), 2u);
  ASSERT_EQ(series[0].steps.size(), 1u);
  EXPECT_NEAR(series[0].steps[0].change.change, 565.0 / 560 - 1, 1e-12) << "the H200's own change, not toward the B200's";
  for (size_t i = 1; i < series.size(); ++i) {
    EXPECT_EQ(series[i].runs.size(), 1u);
    EXPECT_TRUE(series[i].steps.empty()) << series[i].gpu << " " << series[i].workload;
  }
}

FleetSample gpu_sample(int index, double tflops, double spread, double clock, uint64_t reasons = 0, double temp = 60) {
  FleetSample s;
  s.run_id = 1;
  s.host = "node1";
  s.gpu_name = "NVIDIA H200";
  s.uuid = fmt::format("GPU-{}", index);
  s.gpu_index = index;
  s.point.metric = "mamf.tflops.bf16";
  s.point.gpu = index;
  s.point.n = 50;
  s.point.median = tflops;
  s.point.low = tflops - spread;
  s.point.high = tflops + spread;
  s.point.sm_clock_mhz = clock;
  s.point.power_w = 690;
  s.point.temperature_c = temp;
  s.point.throttle = reasons;
  return s;
}

TEST(HistoryFleet, FlagsTheSlowAndThrottledCard) {
  std::vector<FleetSample> samples;
  for (int i = 0; i < 7; ++i) samples.push_back(gpu_sample(i, 790 + i, 2, 1980));
  samples.push_back(gpu_sample(7, 720, 2, 1750, clock_reason::sw_thermal, 84));
  const Fleet f = fleet_of("mamf.tflops.bf16", 0, 0.03, samples);
  ASSERT_EQ(f.gpus.size(), 8u);
  EXPECT_DOUBLE_EQ(f.median.median, 792.5);
  EXPECT_EQ(f.gpus.front().id, "GPU-7") << "worst first";
  EXPECT_EQ(f.gpus.front().status, FleetStatus::slow);
  EXPECT_NE(f.gpus.front().why.find("sw_thermal"), std::string::npos) << f.gpus.front().why;
  EXPECT_NE(f.gpus.front().why.find("1750"), std::string::npos) << f.gpus.front().why;
  EXPECT_NE(f.gpus.front().why.find("84"), std::string::npos) << f.gpus.front().why;
  for (size_t i = 1; i < f.gpus.size(); ++i) EXPECT_EQ(f.gpus[i].status, FleetStatus::typical) << f.gpus[i].id;
  EXPECT_NEAR(f.gpus.front().deviation, 720 / 792.5 - 1, 1e-12);
}

TEST(HistoryFleet, AWideIntervalIsNotAnOutlier) {
  std::vector<FleetSample> samples;
  for (int i = 0; i < 4; ++i) samples.push_back(gpu_sample(i, 800, 2, 1980));
  samples.push_back(gpu_sample(4, 770, 40, 1980));  // 4% low but its interval reaches the median
  const Fleet f = fleet_of("mamf.tflops.bf16", 0, 0.03, samples);
  for (const FleetGpu& g : f.gpus) EXPECT_EQ(g.status, FleetStatus::typical) << g.id;
}

// A B200 in the database is no fast H200, and a 32-layer job on one H200 no slow card.
TEST(HistoryFleet, AnotherGpuModelOrWorkloadIsItsOwnFleet) {
  std::vector<FleetSample> samples;
  for (int i = 0; i < 4; ++i) samples.push_back(gpu_sample(i, 800, 2, 1980));
  FleetSample b200 = gpu_sample(4, 1600, 2, 1965);
  b200.gpu_name = "NVIDIA B200";
  FleetSample other_job = gpu_sample(5, 300, 2, 1980);
  other_job.workload = "llama-3.1-8b, all layers, 8 GPUs, ZeRO-3, bf16, batch 1";
  samples.push_back(b200);
  samples.push_back(other_job);
  const std::vector<Fleet> fleets = fleets_of("mamf.tflops.bf16", 0, 0.03, samples);
  ASSERT_EQ(fleets.size(), 3u);
  EXPECT_EQ(fleets[0].gpu_model, "NVIDIA H200");
  ASSERT_EQ(fleets[0].gpus.size(), 4u);
  for (const FleetGpu& g : fleets[0].gpus) EXPECT_EQ(g.status, FleetStatus::typical) << g.id;
  EXPECT_DOUBLE_EQ(fleets[0].median.median, 800);
  for (size_t i = 1; i < fleets.size(); ++i) {
    ASSERT_EQ(fleets[i].gpus.size(), 1u);
    EXPECT_EQ(fleets[i].gpus[0].status, FleetStatus::typical) << fleets[i].gpu_model;
  }
}

TEST(HistoryFleet, RunsOfOneGpuArePooled) {
  std::vector<FleetSample> samples = {gpu_sample(0, 800, 1, 1980), gpu_sample(0, 810, 1, 1980), gpu_sample(1, 805, 1, 1980)};
  samples[1].run_id = 2;
  const Fleet f = fleet_of("mamf.tflops.bf16", 0, 0.03, samples);
  ASSERT_EQ(f.gpus.size(), 2u);
  for (const FleetGpu& g : f.gpus) {
    if (g.id == "GPU-0") {
      EXPECT_EQ(g.run_ids.size(), 2u);
      EXPECT_DOUBLE_EQ(g.figure.median, 805);
    }
  }
}

}  // namespace
}  // namespace ub
