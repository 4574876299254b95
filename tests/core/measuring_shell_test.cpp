// The measuring commands' shell on the CPU: how a run ends by what its points came to, and how
// the training options travel from `sweep` to the `train` it starts per length.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <limits>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/measuring_shell.hpp"
#include "cli/train_options.hpp"

namespace ub::cli {
namespace {

TEST(MeasuringShell, APointThatFailedItsCheckFailsTheCommandNamingTheCount) {
  Context ctx;
  PointCounts counts;
  counts.measured = 26, counts.wrong = 1;
  try {
    finish_measurement(ctx, "mamf", counts, false, "mamf.jsonl");
    FAIL() << "a wrong result passed";
  } catch (const WorkError& e) {
    EXPECT_STREQ(e.what(), "mamf: 1 of 27 point(s) failed their check against the reference and were not timed "
                           "(their records in mamf.jsonl say why)");
  }
}

TEST(MeasuringShell, PointsThatRanOutOfMemoryOrFailedToRunAreNotWrongResults) {
  Context ctx;
  PointCounts counts;
  counts.measured = 4, counts.out_of_memory = 2, counts.failed = 1;
  EXPECT_NO_THROW(finish_measurement(ctx, "attention", counts, false, "a.jsonl"));
  EXPECT_EQ(ctx.exit_code, 0);
}

TEST(MeasuringShell, AnInterruptedRunExits130) {
  Context ctx;
  PointCounts counts;
  counts.measured = 3;
  finish_measurement(ctx, "bandwidth", counts, true, "b.jsonl");
  EXPECT_EQ(ctx.exit_code, kExitInterrupted);
}

TEST(MeasuringShell, ARendezvousTimeoutMustBeAPositiveNumberOfSeconds) {
  for (double t : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    JobOptions o;
    o.rendezvous_timeout_s = t;
    EXPECT_THROW(o.validate(), UsageError) << t;
  }
  EXPECT_NO_THROW(JobOptions{}.validate());
}

// `train`'s options parsed from `args` into `o`, declared as `parts` say.
void parse(CLI::App& app, TrainOptions& o, std::vector<std::string> args, TrainOptions::Parts parts = {}) {
  o.add_to(app, parts);
  std::reverse(args.begin(), args.end());
  app.parse(args);
}

TEST(TrainOptions, ASweepHandsItsTrainProcessExactlyTheOptionsItWasGiven) {
  CLI::App sweep;
  TrainOptions o;
  parse(sweep, o, {"--lr", "0.001", "--checkpointing", "--profile-steps", "5", "--max-grad-norm", "0.5"},
        {.seqlen = false});
  const std::vector<std::string> given = o.given_as_arguments();
  EXPECT_EQ(given, (std::vector<std::string>{"--lr", "0.001", "--max-grad-norm", "0.5", "--checkpointing",
                                             "--profile-steps", "5"}));
  // The child declares the same options: it reads the same values, and keeps every default.
  CLI::App train;
  TrainOptions child;
  parse(train, child, given);
  EXPECT_DOUBLE_EQ(child.adam.lr, 0.001);
  EXPECT_DOUBLE_EQ(child.adam.max_grad_norm, 0.5);
  EXPECT_TRUE(child.checkpointing);
  EXPECT_EQ(child.profile_steps, 5);
  EXPECT_EQ(child.steps, TrainOptions{}.steps);
  EXPECT_EQ(child.seed, TrainOptions{}.seed);
}

TEST(TrainOptions, TrainAndSweepShareEveryDefault) {
  CLI::App train, sweep;
  TrainOptions t, s;
  parse(train, t, {});
  parse(sweep, s, {}, {.seqlen = false});
  EXPECT_EQ(s.steps, 10);
  EXPECT_EQ(s.steps, t.steps);
  EXPECT_TRUE(s.given_as_arguments().empty());
  for (const CLI::Option* x : train.get_options()) {
    if (x->get_name() == "--seqlen" || x->get_name() == "--help") continue;
    const CLI::Option* y = sweep.get_option_no_throw(x->get_name());
    ASSERT_NE(y, nullptr) << x->get_name() << " is a train option that sweep does not take";
    EXPECT_EQ(x->get_default_str(), y->get_default_str()) << x->get_name();
  }
}

}  // namespace
}  // namespace ub::cli
