// The longest sequence per memory lever and GPU (analysis/memory_levers.hpp), on hand-written runs
// of one workload with four sets of levers (tests/fixtures/levers): the levers read from our
// records and from benchmark.py's header, the rungs in order, a fit capped by a length measured
// out of memory on its own GPU and not on another, the first lever that reaches a length, the
// step-time cost against the run with the fewest levers, and runs of different workloads refused.
#include "analysis/memory_levers.hpp"

#include <gtest/gtest.h>

#include "base/error.hpp"
#include "facts/catalog.hpp"
#include "facts/memfit.hpp"
#include "records/readers/read_run.hpp"

namespace ub {
namespace {

const std::string kLevers = std::string(UB_FIXTURES_DIR) + "/levers/";

class MemoryLeversTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"offloaded_checkpoints", "none", "tiles_chunked", "checkpointing"}) {
      logs_.push_back(read_run_log(kLevers + name + ".jsonl"));
    }
    for (const RunLog& l : logs_) runs_.push_back(&l);
  }
  LadderGpu gpu(const char* id) const {
    const Accelerator* a = &catalog_.find(id);
    return {a->id, a->capacity_gib(), [this, a](const RunLog& r) { return catalog_.try_find(r.gpu) == a; }};
  }
  const Catalog catalog_ = Catalog::load(std::string(UB_DATA_DIR) + "/accelerators.json");
  std::vector<RunLog> logs_;
  std::vector<const RunLog*> runs_;
};

TEST_F(MemoryLeversTest, ReadsTheLeversOfEachRun) {
  EXPECT_EQ(memory_levers(logs_[1]).name(), "none");
  EXPECT_EQ(memory_levers(logs_[3]).name(), "checkpointing");
  EXPECT_EQ(memory_levers(logs_[2]).name(), "checkpointing + MLP tiles + chunked loss");
  EXPECT_EQ(memory_levers(logs_[0]).name(), "checkpointing + MLP tiles + chunked loss + offloaded checkpoints");
  // benchmark.py's header: gradient checkpointing, Liger's fused cross-entropy, ZeRO-3 with the
  // optimizer offloaded (the ml-engineering guide's recipe).
  const RunLog guide = read_run_log(std::string(UB_FIXTURES_DIR) + "/guide/sweep_h200.log");
  EXPECT_EQ(memory_levers(guide).name(), "checkpointing + chunked loss + offloaded optimizer");
}

TEST_F(MemoryLeversTest, EachGpuGetsTheLongestSequencePerLever) {
  const LeverLadder ladder = lever_ladder(runs_, {gpu("h200-sxm"), gpu("b200-sxm")});
  ASSERT_EQ(ladder.rungs.size(), 4u);
  for (size_t i = 1; i < ladder.rungs.size(); ++i) EXPECT_GT(ladder.rungs[i].levers.count(), ladder.rungs[i - 1].levers.count());
  EXPECT_EQ(ladder.rungs[0].levers.name(), "none");
  const double h200 = *catalog_.find("h200-sxm").capacity_gib(), b200 = *catalog_.find("b200-sxm").capacity_gib();
  for (const LeverRung& r : ladder.rungs) {
    const MemoryFit fit = fit_memory(memory_points(*r.run), r.run->path);
    SCOPED_TRACE(r.levers.name());
    // On the B200 nothing was measured: the fit at its capacity, never capped.
    EXPECT_EQ(r.longest[1].tokens, fit.max_seqlen(b200, 1));
    EXPECT_FALSE(r.longest[1].capped);
    // On the H200 the fit, unless a length measured out of memory there is shorter.
    const LongestSequence& h = r.longest[0];
    if (r.levers.name() == "checkpointing + MLP tiles + chunked loss") {
      ASSERT_GT(fit.max_seqlen(h200, 1).value_or(0), 163840) << "the fixture's fit passes its out-of-memory length";
      EXPECT_TRUE(h.capped);
      EXPECT_EQ(h.tokens, 162816);  // below 163840, to the kilo-token
      EXPECT_NE(h.how.find("measured out of memory"), std::string::npos) << h.how;
    } else {
      EXPECT_EQ(h.tokens, fit.max_seqlen(h200, 1));
    }
  }
  // Each lever holds longer sequences than the one before it on the H200.
  for (size_t i = 1; i < ladder.rungs.size(); ++i) EXPECT_GT(*ladder.rungs[i].longest[0].tokens, *ladder.rungs[i - 1].longest[0].tokens);
  EXPECT_EQ(ladder.first_reaching(0, 262144), &ladder.rungs[3]);
  EXPECT_EQ(ladder.first_reaching(0, 4096), &ladder.rungs[0]);
  EXPECT_EQ(ladder.first_reaching(0, 100000000), nullptr);
}

// The cost in step time: the median step against the run with the fewest levers, at the longest
// length both measured (8192 here; the fixture's steps are 1.25x, 1.26x and 1.29x of the base's).
TEST_F(MemoryLeversTest, TheCostIsTheStepTimeAgainstTheFewestLevers) {
  const LeverLadder ladder = lever_ladder(runs_, {gpu("h200-sxm")});
  EXPECT_FALSE(ladder.rungs[0].step_time_ratio);
  const double want[] = {0, 1.25, 1.26, 1.29};
  for (size_t i = 1; i < 4; ++i) {
    ASSERT_TRUE(ladder.rungs[i].step_time_ratio) << ladder.rungs[i].levers.name();
    EXPECT_EQ(ladder.rungs[i].cost_at, 8192);
    EXPECT_NEAR(*ladder.rungs[i].step_time_ratio, want[i], 1e-5);  // the fixture's times have two decimals
  }
}

TEST_F(MemoryLeversTest, RunsOfAnotherWorkloadOrTheSameLeversTwiceAreRefused) {
  const RunLog other = read_run_log(std::string(UB_FIXTURES_DIR) + "/records_h200.jsonl");  // 4 layers
  std::vector<const RunLog*> mixed = runs_;
  mixed.push_back(&other);
  try {
    lever_ladder(mixed, {gpu("h200-sxm")});
    FAIL() << "a 4-layer run was set beside 32-layer ones";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("records_h200.jsonl measured different workloads"), std::string::npos) << e.what();
  }
  // The same model at another world size, or in another precision, is another workload.
  for (const auto& [key, value] : {std::pair{"world_size", "8"}, {"master_weights", "true"}}) {
    RunLog changed = logs_[3];
    changed.config[key] = value;
    std::vector<const RunLog*> with = {runs_[1], &changed};
    EXPECT_THROW(lever_ladder(with, {gpu("h200-sxm")}), UsageError) << key;
  }
  std::vector<const RunLog*> twice = runs_;
  twice.push_back(runs_[1]);
  EXPECT_THROW(lever_ladder(twice, {gpu("h200-sxm")}), UsageError);
}

}  // namespace
}  // namespace ub
