// Whether a GPU holds a sequence length (analysis/memory_headroom.hpp), on real records: a length
// it ran fits; one at or past a length measured out of memory does not; one past a single length
// measured, or past a --find-max that did not settle the boundary, is not known; a batch above one
// also says what one sequence per step holds.
#include "analysis/memory_headroom.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "facts/catalog.hpp"
#include "records/readers/read_run.hpp"
#include "file_text.hpp"

namespace ub {
namespace {

using Fit = LongestSequence::Fit;

const std::string kFx = UB_FIXTURES_DIR;

double h200_capacity() {
  static const Catalog c = Catalog::load(std::string(UB_DATA_DIR) + "/accelerators.json");
  return *c.find("h200-sxm").capacity_gib();
}

TEST(LongestSequence, OneLengthMeasuredSaysNothingOfLongerOnes) {
  const LongestSequence l = longest_sequence(read_run_log(kFx + "/train_records_h200_plain_8k.jsonl"), h200_capacity(),
                                             std::nullopt);
  EXPECT_FALSE(l.tokens);
  EXPECT_EQ(l.holds(8192), Fit::yes);
  EXPECT_EQ(l.holds(4096), Fit::yes);
  EXPECT_EQ(l.holds(16384), Fit::unknown);
  EXPECT_NE(l.unknown_why(16384).find("the longest length it ran is 8192, and unknown (fewer than two lengths"),
            std::string::npos) << l.unknown_why(16384);
  // Read at another GPU's capacity, what this GPU ran says nothing of that one.
  const LongestSequence other = longest_sequence(read_run_log(kFx + "/train_records_h200_plain_8k.jsonl"), 180.0,
                                                 std::nullopt, false);
  EXPECT_EQ(other.holds(8192), Fit::unknown);
}

TEST(LongestSequence, AFitAndALengthOutOfMemoryBoundIt) {
  const RunLog run = read_run_log(kFx + "/levers/none.jsonl");  // 4k and 8k ran, 16k out of memory
  const LongestSequence l = longest_sequence(run, h200_capacity(), std::nullopt);
  ASSERT_TRUE(l.tokens);
  EXPECT_EQ(l.holds(*l.tokens), Fit::yes);
  EXPECT_EQ(l.holds(*l.tokens + 1), Fit::no);
  EXPECT_EQ(l.holds(16384), Fit::no);
  EXPECT_EQ(l.holds(1 << 20), Fit::no);
}

TEST(LongestSequence, AFindMaxThatDidNotSettleTheBoundaryIsALowerBound) {
  const RunLog run = read_run_log(kFx + "/levers/none.jsonl");
  const LongestSequence ceiling = longest_sequence(run, h200_capacity(), SweepMax{8192, std::nullopt, 1024});
  EXPECT_TRUE(ceiling.lower_bound);
  EXPECT_EQ(ceiling.cell(), "at least 8192 (found; none longer tried)");
  EXPECT_EQ(ceiling.holds(8192), Fit::yes);
  EXPECT_EQ(ceiling.holds(12000), Fit::unknown);
  EXPECT_EQ(ceiling.holds(16384), Fit::no);  // ran out of memory there
  const LongestSequence gap = longest_sequence(run, h200_capacity(), SweepMax{8192, 16384, 1024});
  EXPECT_TRUE(gap.lower_bound);
  EXPECT_EQ(gap.unsettled_below, 16384);
  EXPECT_EQ(gap.holds(15000), Fit::unknown);
  EXPECT_NE(gap.unknown_why(15000).find("did not settle the boundary below 16384"), std::string::npos);
  const LongestSequence settled = longest_sequence(run, h200_capacity(), SweepMax{8192, 9216, 1024});
  EXPECT_FALSE(settled.lower_bound);
  EXPECT_EQ(settled.cell(), "8192 (found)");
  EXPECT_EQ(settled.holds(9000), Fit::no);
}

TEST(LongestSequence, ABatchAboveOneSaysWhatOneSequencePerStepHolds) {
  std::istringstream in(ub_test::file_text(kFx + "/levers/none.jsonl"));
  std::ostringstream two;
  for (std::string line; std::getline(in, line);) {
    for (size_t at; (at = line.find("\"batch\": 1")) != std::string::npos;) line.replace(at, 10, "\"batch\": 2");
    two << line << "\n";
  }
  const std::string path = ::testing::TempDir() + "/longest_batch2.jsonl";
  std::ofstream(path) << two.str();
  const RunLog run = read_run_log(path);
  ASSERT_EQ(run.batch, 2);
  const LongestSequence l = longest_sequence(run, h200_capacity(), std::nullopt);
  ASSERT_TRUE(l.fitted && l.at_batch_one);
  EXPECT_GE(*l.at_batch_one, 2 * *l.fitted);
  EXPECT_NE(l.how.find("at batch 2"), std::string::npos) << l.how;
  const LongestSequence one = longest_sequence(read_run_log(kFx + "/levers/none.jsonl"), h200_capacity(), std::nullopt);
  EXPECT_FALSE(one.at_batch_one);
}

}  // namespace
}  // namespace ub
