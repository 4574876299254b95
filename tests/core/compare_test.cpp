// Comparison of two runs: speedups with intervals and verdicts, OOM points, MFU, the stack
// check, costs; and the memory fit on known points.
#include "analysis/compare.hpp"
#include "analysis/decision_summary.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "base/error.hpp"
#include "facts/cost.hpp"
#include "facts/memfit.hpp"
#include "records/readers/read_run.hpp"
#include "records/run_log.hpp"
#include "records/telemetry.hpp"

namespace ub {
namespace {

const std::string kFixtures = UB_FIXTURES_DIR;
const std::string kModels = std::string(UB_DATA_DIR) + "/models";

const Catalog& catalog() {
  static const Catalog c = Catalog::load(std::string(UB_DATA_DIR) + "/accelerators.json");
  return c;
}

Comparison h200_vs_b200(CompareOptions o = {}) {
  return compare_runs(read_run_log(kFixtures + "/sweep_h200.log"),
                      read_run_log(kFixtures + "/sweep_b200.log"), catalog(), kModels, o);
}

Summary times(std::vector<double> v) { return summarize(std::move(v)); }

TEST(Speedup, VerdictsFromIntervals) {
  const Summary old_t = times({100, 101, 99, 100, 100, 102, 98, 100, 101, 99});
  EXPECT_EQ(speedup_of(old_t, times({50, 51, 49, 50, 50, 50, 51, 49, 50, 50})).verdict, Verdict::faster);
  EXPECT_EQ(speedup_of(old_t, times({200, 201, 199, 200, 200, 202, 198, 200, 201, 199})).verdict, Verdict::slower);
  const Summary tight = times({100, 100.1, 99.9, 100, 100, 100.1, 99.9, 100, 100, 100});
  EXPECT_EQ(speedup_of(tight, tight).verdict, Verdict::same);
  // The same noisy timings: the crosswise interval is wider than 2%, so it cannot say SAME.
  EXPECT_EQ(speedup_of(old_t, old_t).verdict, Verdict::ambiguous);
  EXPECT_EQ(speedup_of(old_t, times({80, 120, 95, 105, 130, 70, 100, 90, 110, 100})).verdict, Verdict::ambiguous);
  const Speedup s = speedup_of(old_t, times({50, 50, 50, 50, 50, 50, 50, 50, 50, 50}));
  EXPECT_DOUBLE_EQ(s.ratio, 2.0);
  EXPECT_LE(s.low, s.ratio);
  EXPECT_GE(s.high, s.ratio);
}

// Fewer than six steps on a side: no interval of the median reaches 95%, so no verdict, however
// far the ratio is from 1; the range shown is the steps' own.
TEST(Speedup, FewerThanSixStepsDrawNoVerdict) {
  const Summary one = times({100}), five = times({100, 101, 99, 100, 102}), six = times({100, 101, 99, 100, 102, 98});
  const Speedup s = speedup_of(one, times({50}));
  EXPECT_EQ(s.verdict, Verdict::few_samples);
  EXPECT_DOUBLE_EQ(s.ratio, 2.0);
  EXPECT_EQ(to_string(s.verdict), "FEW STEPS");
  EXPECT_EQ(speedup_of(five, times({50, 51, 49, 50, 50})).verdict, Verdict::few_samples);
  EXPECT_EQ(speedup_of(six, times({50, 51, 49, 50, 50, 52})).verdict, Verdict::faster);
  EXPECT_EQ(speedup_of(six, five).verdict, Verdict::few_samples);
}

// A crossing of the break-even is between two lengths whose whole intervals lie on either side
// of it: medians straddling it inside their noise cross nothing.
TEST(DecisionSummary, ACrossingOfTheBreakEvenIsOutsideTheNoise) {
  const auto comparison = [](Speedup a, Speedup b) {
    Comparison c;
    c.break_even = 1.0;
    for (const auto& [seqlen, s] : {std::pair{int64_t{2048}, a}, std::pair{int64_t{4096}, b}}) {
      CompareRow r;
      r.seqlen = seqlen;
      r.speedup = s;
      c.rows.push_back(r);
    }
    return c;
  };
  EXPECT_FALSE(decision_summary(comparison(speedup_in(0.9997, 0.95, 1.06), speedup_in(1.0022, 0.95, 1.06))).crossover_seqlen);
  EXPECT_FALSE(decision_summary(comparison(speedup_in(0.90, 0.85, 0.95), speedup_in(1.02, 0.97, 1.08))).crossover_seqlen);
  const auto crossing = decision_summary(comparison(speedup_in(0.80, 0.78, 0.82), speedup_in(1.20, 1.18, 1.22))).crossover_seqlen;
  ASSERT_TRUE(crossing);
  EXPECT_GT(*crossing, 2048);
  EXPECT_LT(*crossing, 4096);
}

TEST(Compare, RowsPerSequenceLengthWithOomPoints) {
  const Comparison c = h200_vs_b200();
  ASSERT_EQ(c.rows.size(), 4u);
  const CompareRow& r8 = c.rows[0];
  EXPECT_EQ(r8.seqlen, 8192);
  EXPECT_NEAR(r8.speedup->ratio, 2997.0 / 1775.0, 0.01);
  EXPECT_EQ(r8.speedup->verdict, Verdict::faster);
  EXPECT_NEAR(*r8.attention_share, 0.125, 0.001);
  EXPECT_NEAR(*r8.old_side.mfu, *r8.old_side.tflops / 989.0, 1e-9);
  EXPECT_NEAR(*r8.new_side.mfu, *r8.new_side.tflops / 2250.0, 1e-9);
  EXPECT_DOUBLE_EQ(*r8.old_side.peak_gib, 16.3);
  const CompareRow& r256 = c.rows[3];
  EXPECT_EQ(r256.seqlen, 262144);
  EXPECT_EQ(r256.old_side.status, "oom");
  EXPECT_EQ(r256.new_side.status, "ok");
  EXPECT_EQ(r256.note, "old cannot run this");
  EXPECT_FALSE(r256.speedup.has_value());
  EXPECT_NEAR(*c.peak_ratio, 2.275, 0.001);
  EXPECT_NEAR(*c.bandwidth_ratio, 1.667, 0.001);
}

TEST(Compare, StackCheckNamesEachDifference) {
  const Comparison c = h200_vs_b200();
  EXPECT_TRUE(c.stack_mismatch);
  bool torch = false, fa_intended = false, backend_intended = false;
  for (const auto& d : c.stack) {
    if (d.key == "torch") torch = !d.intended && d.old_value == "2.13.0" && d.new_value == "2.12.0";
    if (d.key == "flash-attn-4") fa_intended = d.intended;
    if (d.key == "config attn_backend") backend_intended = d.intended;
  }
  EXPECT_TRUE(torch);
  EXPECT_TRUE(fa_intended);
  EXPECT_TRUE(backend_intended);
  CompareOptions strict;
  strict.strict = true;
  try {
    h200_vs_b200(strict);
    FAIL();
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("torch"), std::string::npos) << e.what();
  }
}

// One measurement on both sides is refused, unless the caller sets it beside itself on purpose (a
// prediction's table): then it is the same everywhere.
TEST(Compare, SameLogIsRefusedOrTheSameEverywhere) {
  EXPECT_THROW(compare_runs(read_run_log(kFixtures + "/sweep_h200.log"), read_run_log(kFixtures + "/sweep_h200.log"),
                            catalog(), kModels, {}),
               UsageError);
  CompareOptions beside_itself;
  beside_itself.old_run_beside_itself = true;
  const Comparison c = compare_runs(read_run_log(kFixtures + "/sweep_h200.log"),
                                    read_run_log(kFixtures + "/sweep_h200.log"), catalog(), kModels, beside_itself);
  EXPECT_FALSE(c.stack_mismatch);
  EXPECT_TRUE(c.stack.empty());
  for (const CompareRow& r : c.rows) {
    if (r.speedup) {
      EXPECT_DOUBLE_EQ(r.speedup->ratio, 1.0);
      EXPECT_EQ(r.speedup->verdict, Verdict::same);
    }
  }
  EXPECT_EQ(c.rows.back().note, "neither can run this");
}

TEST(Compare, DifferentModelsNeedForce) {
  auto run = [](bool force) {
    CompareOptions o;
    o.force = force;
    return compare_runs(read_run_log(kFixtures + "/sweep_h200.log"),
                        read_run_log(kFixtures + "/sweep_70b.log"), catalog(), kModels, o);
  };
  EXPECT_THROW(run(false), UsageError);
  EXPECT_NO_THROW(run(true));
}

TEST(Compare, CostsAndTimeToTrain) {
  CompareOptions o;
  o.price_old = 3.0;
  o.price_new = 6.0;
  o.tokens = 1e12;
  o.gpus = 8;
  const Comparison c = h200_vs_b200(o);
  EXPECT_DOUBLE_EQ(*c.break_even, 2.0);
  const CompareRow& r = c.rows[0];
  // H200: 8192 tokens per 2.997 s (the median steady step) per GPU.
  const double tps = 8192 / 2.997;
  EXPECT_NEAR(*r.old_side.usd_per_mtok, 3.0 / 3600 / tps * 1e6, 1e-9);
  EXPECT_NEAR(*r.cost_ratio, 2.0 / r.speedup->ratio, 1e-9);
  EXPECT_NEAR(*r.wall_clock_ratio, 1.0 / r.speedup->ratio, 1e-9);
  EXPECT_NEAR(*r.old_side.hours_to_train, 1e12 / (tps * 8) / 3600, 1e-6);
  CompareOptions bad;
  bad.price_old = -1.0;
  bad.price_new = 2.0;
  EXPECT_THROW(h200_vs_b200(bad), UsageError);
}

// The decision in plain words: each length falls in exactly one cost verdict by its interval against
// the break-even; the crossover sits between the two measured lengths around it; the lengths only
// the new GPU runs are named; differing software is named in the alert.
TEST(Compare, DecisionSummaryInPlainWords) {
  CompareOptions o;
  o.price_old = 3.0;
  const Comparison probe = h200_vs_b200();
  // A break-even inside the measured speedups, so that both verdicts appear.
  double lo = 1e9, hi = 0;
  for (const CompareRow& r : probe.rows) {
    if (r.speedup) lo = std::min(lo, r.speedup->ratio), hi = std::max(hi, r.speedup->ratio);
  }
  ASSERT_LT(lo, hi);
  o.price_new = 3.0 * (lo + hi) / 2;
  const Comparison c = h200_vs_b200(o);
  const DecisionSummary d = decision_summary(c);
  const auto said = [&](const std::string& what) {
    return std::any_of(d.lines.begin(), d.lines.end(), [&](const std::string& l) { return l.find(what) != std::string::npos; });
  };
  size_t cheaper = 0, costlier = 0;
  for (const CompareRow& r : c.rows) {
    if (!r.speedup) continue;
    cheaper += r.speedup->low > *c.break_even;
    costlier += r.speedup->high < *c.break_even;
  }
  EXPECT_EQ(said("CHEAPER per token"), cheaper > 0);
  EXPECT_EQ(said("COSTS MORE per token"), costlier > 0);
  if (d.crossover_seqlen) {
    // Between two neighbouring measured lengths whose speedups lie on either side of the break-even.
    bool bracketed = false;
    const CompareRow* prev = nullptr;
    for (const CompareRow& r : c.rows) {
      if (!r.speedup) continue;
      if (prev && static_cast<double>(prev->seqlen) < *d.crossover_seqlen &&
          *d.crossover_seqlen < static_cast<double>(r.seqlen)) {
        bracketed = (prev->speedup->ratio - *c.break_even) * (r.speedup->ratio - *c.break_even) < 0;
      }
      prev = &r;
    }
    EXPECT_TRUE(bracketed) << *d.crossover_seqlen;
    EXPECT_TRUE(said("interpolated"));
  }
  for (const CompareRow& r : c.rows) {
    if (r.note == "old cannot run this") {
      EXPECT_TRUE(said("Only the b200-sxm fits")) << r.seqlen;
    }
  }
  EXPECT_NE(d.stack_alert.find("torch"), std::string::npos) << d.stack_alert;
  EXPECT_TRUE(said("Wall clock"));
  // Without prices: no cost verdict, the wall clock still.
  const DecisionSummary plain = decision_summary(probe);
  EXPECT_TRUE(std::none_of(plain.lines.begin(), plain.lines.end(),
                           [](const std::string& l) { return l.find("per token") != std::string::npos; }));
}

TEST(Cost, Formulas) {
  EXPECT_DOUBLE_EQ(tokens_per_gpu_second(2, 4096, 1000), 8192);
  EXPECT_DOUBLE_EQ(usd_per_million_tokens(3.6, 1000), 1.0);
  EXPECT_DOUBLE_EQ(usd_per_step(3.6, 2000), 0.002);
  EXPECT_DOUBLE_EQ(break_even_speedup(2, 5), 2.5);
  EXPECT_DOUBLE_EQ(hours_to_train(3.6e6, 1, 1000), 1.0);
  // 8192 tokens for 40 J; a million of them at 1 USD/kWh is 1e6 / 204.8 J = 1.356 Wh, times the PUE.
  EXPECT_DOUBLE_EQ(tokens_per_joule(2, 4096, 40), 204.8);
  EXPECT_NEAR(energy_usd_per_million_tokens(204.8, 1.0, 1.5), 1e6 / 204.8 / 3.6e6 * 1.5, 1e-15);
}

// A step's energy is its time at the power measured while it ran (the window's energy over the
// window's time), averaged over the steady steps; warm-up steps and steps without telemetry do
// not count, and records from before energy was recorded use the samples' mean power.
TEST(Energy, JoulesPerStepAreEachStepsTimeAtItsMeasuredPower) {
  PointSteps p;
  const auto step = [](bool warmup, double ms, std::optional<TelemetrySummary> t) {
    TrainStep s;
    s.warmup = warmup, s.exec_time_ms = ms, s.telemetry = std::move(t);
    return s;
  };
  TelemetrySummary counter;
  counter.available = true, counter.power_mean_w = 600, counter.window_s = 0.5, counter.energy_j = 350;  // 700 W
  counter.energy_source = kEnergyFromCounter;
  TelemetrySummary sampled;
  sampled.available = true, sampled.power_mean_w = 500;
  p.add(step(true, 900, counter));
  EXPECT_FALSE(p.joules_per_step()) << "warm-up steps do not count";
  p.add(step(false, 400, counter));    // 700 W x 0.4 s = 280 J
  p.add(step(false, 400, sampled));    // 500 W x 0.4 s = 200 J
  p.add(step(false, 400, std::nullopt));
  ASSERT_TRUE(p.joules_per_step());
  EXPECT_DOUBLE_EQ(*p.joules_per_step(), 240);
  // A coarse counter: windows of 140 ms reading 66 J and 138 J in turn are 204 J over 0.28 s
  // together (729 W), not their ratios' mean.
  PointSteps coarse;
  for (double j : {66.0, 138.0}) {
    TelemetrySummary t = counter;
    t.window_s = 0.14, t.energy_j = j;
    coarse.add(step(false, 135, t));
  }
  EXPECT_NEAR(*coarse.joules_per_step(), 204.0 / 0.28 * 0.135, 1e-9);
}

TEST(MemFit, RecoversALineAndItsLimit) {
  // The ml-engineering guide's fit: 12.6 GiB + 0.00043 GiB per token.
  std::vector<std::pair<double, double>> pts;
  for (double t : {8192.0, 32768.0, 65536.0, 131072.0, 262144.0}) pts.emplace_back(t, 12.6 + 0.00043 * t);
  const MemoryFit f = fit_memory(pts, "test");
  EXPECT_NEAR(f.intercept_gib, 12.6, 1e-9);
  EXPECT_NEAR(f.slope_gib_per_token, 0.00043, 1e-12);
  EXPECT_NEAR(f.r2, 1.0, 1e-12);
  EXPECT_EQ(f.max_seqlen(130.0, 1), static_cast<int64_t>((130.0 - 12.6) / 0.00043));
  EXPECT_EQ(f.max_seqlen(130.0, 2), static_cast<int64_t>((130.0 - 12.6) / 0.00043 / 2));
  EXPECT_THROW(fit_memory({{8192, 20}}, "test"), WorkError);
  EXPECT_THROW(fit_memory({{8192, 20}, {8192, 21}}, "test"), WorkError);
  // A line so nearly flat that its limit is beyond any int64: no limit, not a wrapped negative.
  MemoryFit nearly_flat;
  nearly_flat.intercept_gib = 1, nearly_flat.slope_gib_per_token = 1e-300;
  EXPECT_FALSE(nearly_flat.max_seqlen(130.0, 1).has_value());
  const MemoryFit flat = fit_memory({{1, 5}, {2, 5}}, "test");
  EXPECT_FALSE(flat.max_seqlen(100, 1).has_value());
  // Memory that falls as the sequence grows is no step's: refused. Noise around flat is not.
  EXPECT_THROW(fit_memory({{8192, 90}, {32768, 60}, {131072, 30}}, "test"), WorkError);
  EXPECT_NO_THROW(fit_memory({{8192, 40.2}, {32768, 40.0}, {131072, 40.1}}, "test"));
}

}  // namespace
}  // namespace ub
