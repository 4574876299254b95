// Sweep bookkeeping: what a records file already holds (for --resume), and the bisection of
// --find-max on the out-of-memory boundary.
#include "analysis/sweep_plan.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/error.hpp"

namespace ub {
namespace {

std::filesystem::path write(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::path(::testing::TempDir()) / name;
  std::ofstream(p) << text;
  return p;
}

TEST(SweepOutcomes, MeasuredOomFailedAndATruncatedLastLine) {
  const auto p = write("sweep_outcomes.jsonl",
                       "{\"type\":\"context\",\"gpus\":[{\"name\":\"NVIDIA H200\"}]}\n"
                       "{\"type\":\"train_step\",\"seqlen\":4096,\"step\":0,\"warmup\":true,\"exec_time_ms\":1}\n"
                       "{\"type\":\"train_step\",\"seqlen\":4096,\"step\":1,\"warmup\":false,\"exec_time_ms\":1}\n"
                       "{\"type\":\"train_oom\",\"seqlen\":65536,\"what\":\"arena\"}\n"
                       "{\"type\":\"train_error\",\"seqlen\":16384,\"error\":\"NaN\"}\n"
                       "{\"type\":\"train_step\",\"seqlen\":8192,\"step\":0,\"warmup\":true,\"exec_time_ms\":1}\n"
                       "{\"type\":\"train_step\",\"seqlen\":32768,\"st");
  const auto o = sweep_outcomes(p);
  ASSERT_EQ(o.size(), 4u);
  EXPECT_EQ(o.at(4096), PointOutcome::measured);
  EXPECT_EQ(o.at(65536), PointOutcome::oom);
  EXPECT_EQ(o.at(16384), PointOutcome::failed);
  EXPECT_EQ(o.at(8192), PointOutcome::failed);  // warm-up only: interrupted
  EXPECT_TRUE(sweep_outcomes(std::filesystem::path(::testing::TempDir()) / "nonexistent.jsonl").empty());
}

// A point stopped before its steps were done is run again, not counted as measured.
TEST(SweepOutcomes, APointShortOfItsStepsIsRetried) {
  const auto p = write("sweep_short.jsonl",
                       "{\"type\":\"context\",\"gpus\":[{\"name\":\"NVIDIA H200\"}]}\n"
                       "{\"type\":\"train_step\",\"seqlen\":4096,\"step\":1,\"warmup\":false,\"exec_time_ms\":1}\n"
                       "{\"type\":\"train_step\",\"seqlen\":4096,\"step\":2,\"warmup\":false,\"exec_time_ms\":1}\n"
                       "{\"type\":\"train_step\",\"seqlen\":8192,\"step\":1,\"warmup\":false,\"exec_time_ms\":1}\n");
  const auto o = sweep_outcomes(p, 2);
  EXPECT_EQ(o.at(4096), PointOutcome::measured);
  EXPECT_EQ(o.at(8192), PointOutcome::failed);
}

// --resume into a file of another workload is refused, naming the key and the line.
TEST(SweepOutcomes, ResumeChecksTheWorkload) {
  const auto p = write("sweep_ctx.jsonl",
                       "{\"type\":\"context\",\"config\":{\"model\":\"llama-3.1-8b\",\"layers\":4,\"batch\":1,"
                       "\"master_weights\":true,\"activation_checkpointing\":false,\"loss_chunk\":0}}\n");
  nlohmann::json same = {{"model", "llama-3.1-8b"}, {"layers", 4}, {"batch", 1}, {"master_weights", true},
                         {"activation_checkpointing", false}, {"loss_chunk", 0}};
  EXPECT_EQ(resume_mismatch(p, same), "");
  nlohmann::json other = same;
  other["activation_checkpointing"] = true;
  const std::string why = resume_mismatch(p, other);
  EXPECT_NE(why.find("activation_checkpointing is false there, true here"), std::string::npos) << why;
  EXPECT_NE(why.find("sweep_ctx.jsonl:1"), std::string::npos) << why;
  EXPECT_EQ(resume_mismatch(std::filesystem::path(::testing::TempDir()) / "none.jsonl", other), "");
}

TEST(SweepOutcomes, ADamagedLineInsideIsSkippedThePointsAroundItKept) {
  const auto p = write("sweep_bad.jsonl", "{\"type\":\"context\"}\n{\"type\":\"train_step\",\"seq\n"
                                          "{\"type\":\"train_oom\",\"seqlen\":8}\n");
  const auto o = sweep_outcomes(p);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o.at(8), PointOutcome::oom);
}

TEST(MaxFitSearch, BisectsToTheGranularity) {
  MaxFitSearch s(1024, int64_t{1} << 22);
  s.fits(65536);
  s.does_not_fit(262144);
  int probes = 0;
  const int64_t truth = 200000;  // fits up to here
  while (auto next = s.next()) {
    ASSERT_GT(*next, *s.longest_fit());
    ASSERT_LT(*next, *s.shortest_failure());
    EXPECT_EQ(*next % 1024, 0);
    if (*next <= truth) s.fits(*next); else s.does_not_fit(*next);
    ASSERT_LT(++probes, 20);
  }
  EXPECT_LE(*s.shortest_failure() - *s.longest_fit(), 1024);
  EXPECT_LE(*s.longest_fit(), truth);
  EXPECT_GT(*s.shortest_failure(), truth);
  EXPECT_EQ(*s.longest_fit(), truth / 1024 * 1024);
}

TEST(MaxFitSearch, DoublesWithoutAFailureAndHalvesWithoutAFit) {
  MaxFitSearch up(1024, 100000);
  up.fits(8192);
  EXPECT_EQ(up.next(), 16384);
  up.fits(65536);
  EXPECT_EQ(up.next(), 99328);  // 131072 is beyond the ceiling: the ceiling, to the granularity
  up.fits(99328);
  EXPECT_EQ(up.next(), std::nullopt);
  MaxFitSearch down(1024, 1 << 20);
  down.does_not_fit(8192);
  EXPECT_EQ(down.next(), 4096);
  MaxFitSearch none(1024, 1 << 20);
  EXPECT_EQ(none.next(), std::nullopt);
}

// A failure known far past the ceiling (an earlier run's, read back by --resume) does not send the
// search past it: the ceiling is probed first, and the bisection goes on below it.
TEST(MaxFitSearch, NeverProbesPastTheCeiling) {
  const int64_t ceiling = int64_t{1} << 22;
  MaxFitSearch alone(1024, ceiling);
  alone.does_not_fit(int64_t{1} << 30);
  EXPECT_EQ(alone.next(), ceiling);
  alone.fits(ceiling);
  EXPECT_EQ(alone.next(), std::nullopt);

  MaxFitSearch s(1024, ceiling);
  s.fits(65536);
  s.does_not_fit(int64_t{1} << 30);
  s.aim(int64_t{1} << 29);
  const int64_t truth = 3000000;
  int probes = 0;
  while (auto next = s.next()) {
    ASSERT_LE(*next, ceiling);
    if (*next <= truth) s.fits(*next); else s.does_not_fit(*next);
    ASSERT_LT(++probes, 40);
  }
  EXPECT_EQ(*s.longest_fit(), truth / 1024 * 1024);
  EXPECT_LE(*s.shortest_failure() - *s.longest_fit(), 1024);
}

// A memory fit that predicts a length past the ceiling (a full model at long sequences, each probe
// minutes) tries the ceiling first, not 10% steps up from the longest fit: 131072 fits, the fit
// says 518635, the ceiling 393216 is probed, fits, and the search is done in one probe.
TEST(MaxFitSearch, APredictionPastTheCeilingProbesTheCeilingFirst) {
  MaxFitSearch s(32768, 393216);
  s.fits(131072);
  s.aim(518635);
  EXPECT_EQ(s.next(), 393216);
  s.fits(393216);
  EXPECT_EQ(s.next(), std::nullopt);
  MaxFitSearch short_of_it(32768, 393216);
  short_of_it.fits(131072);
  short_of_it.aim(518635);
  short_of_it.does_not_fit(393216);
  const std::optional<int64_t> below = short_of_it.next();
  ASSERT_TRUE(below);
  EXPECT_GT(*below, 131072);
  EXPECT_LT(*below, 393216);
}

// Probes until the boundary is known; `truth` is the longest length that fits.
int probes_to_boundary(MaxFitSearch& s, int64_t truth) {
  int probes = 0;
  while (auto next = s.next()) {
    if (*next <= truth) {
      s.fits(*next);
    } else {
      s.does_not_fit(*next);
    }
    if (++probes > 40) break;
  }
  return probes;
}

// Aimed by a memory fit, the search lands on the same boundary in fewer probes than doubling from
// the measured lengths, whether the prediction is a little high or a little low, and still finds
// the boundary when the prediction is far off.
TEST(MaxFitSearch, AimedByAMemoryFitItProbesFewerLengths) {
  const int64_t truth = 271000;
  for (const int64_t predicted : {int64_t{265000}, int64_t{280000}, int64_t{150000}, int64_t{900000}}) {
    SCOPED_TRACE(predicted);
    MaxFitSearch plain(1024, int64_t{1} << 22), aimed(1024, int64_t{1} << 22);
    for (MaxFitSearch* s : {&plain, &aimed}) s->fits(32768);
    aimed.aim(predicted);
    EXPECT_EQ(aimed.next(), predicted / 1024 * 1024);  // the prediction first
    const int a = probes_to_boundary(aimed, truth), p = probes_to_boundary(plain, truth);
    EXPECT_EQ(*aimed.longest_fit(), truth / 1024 * 1024);
    EXPECT_EQ(*plain.longest_fit(), truth / 1024 * 1024);
    EXPECT_LE(*aimed.shortest_failure() - *aimed.longest_fit(), 1024);
    if (predicted > 200000 && predicted < 300000) {
      EXPECT_LT(a, p);
    }
  }
}

}  // namespace
}  // namespace ub
