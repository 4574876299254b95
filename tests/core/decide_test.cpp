// The spec-only decision: capability gate, break-even, and what specs cannot decide.
#include "analysis/decide.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "base/error.hpp"

namespace ub {
namespace {

const Catalog& catalog() {
  static const Catalog c = Catalog::load(std::string(UB_DATA_DIR) + "/accelerators.json");
  return c;
}

DecideInput input(const char* from, const char* to) {
  DecideInput in;
  in.from = &catalog().find(from);
  in.to = &catalog().find(to);
  return in;
}

bool any_reason_contains(const Decision& d, const std::string& s) {
  for (const auto& r : d.reasons) {
    if (r.find(s) != std::string::npos) return true;
  }
  return false;
}

TEST(SpecCompare, H200ToB200Ratios) {
  const SpecComparison c = compare_specs(catalog().find("h200"), catalog().find("b200"));
  EXPECT_NEAR(*c.ratios.peak.at(Dtype::bf16), 2.28, 0.005);
  EXPECT_NEAR(*c.ratios.peak.at(Dtype::fp8), 2.27, 0.005);
  EXPECT_NEAR(*c.ratios.memory, 1.28, 0.005);
  EXPECT_NEAR(*c.ratios.bandwidth, 1.67, 0.005);
  EXPECT_NEAR(*c.ratios.power, 1.43, 0.005);
  EXPECT_NEAR(*c.ratios.mamf_bf16, 2.20, 0.005);
  EXPECT_NEAR(*c.ratios.mamf_fp8, 2.36, 0.005);
  EXPECT_EQ(c.new_dtypes, (std::vector<Dtype>{Dtype::fp6, Dtype::fp4, Dtype::nvfp4, Dtype::mxfp8,
                                              Dtype::mxfp4}));
  EXPECT_TRUE(c.lost_dtypes.empty());
  EXPECT_FALSE(c.ratios.peak.at(Dtype::fp4).has_value());  // unsupported on H200: no ratio
}

TEST(SpecCompare, UnknownFiguresGiveNoRatio) {
  const SpecComparison c = compare_specs(catalog().find("h200"), catalog().find("tpu-v7x"));
  EXPECT_FALSE(c.ratios.memory.has_value());
  EXPECT_FALSE(c.ratios.peak.at(Dtype::fp32).has_value());
}

TEST(Decide, DefaultIsMeasureWithTheNewDtypesNamed) {
  const Decision d = decide(input("h200", "b200"));
  EXPECT_EQ(d.verdict, "measure");
  EXPECT_FALSE(d.capability_gap);
  EXPECT_TRUE(d.missing_dtypes.empty());
  EXPECT_FALSE(d.break_even_speedup.has_value());
  EXPECT_TRUE(any_reason_contains(d, "nvfp4"));
  EXPECT_TRUE(any_reason_contains(d, "Software"));
}

// Dtypes the catalog does not know for the old GPU are not "no difference": the new GPU's are
// named, and the sentence of no new dtype says which it leaves out.
TEST(Decide, DtypesTheCatalogCannotTellAreNotCalledNoDifference) {
  const Decision d = decide(input("tpu-v7x", "b200"));
  EXPECT_TRUE(d.specs.new_dtypes.empty());
  EXPECT_FALSE(d.specs.unknown_dtypes.empty());
  EXPECT_TRUE(any_reason_contains(d, "executes fp32, tf32, int8, fp6, fp4, nvfp4, mxfp8, mxfp4; whether Google TPU v7x "
                                     "does, the catalog does not know"));
  EXPECT_TRUE(any_reason_contains(d, "cannot, of those the catalog knows for both (not "));
  const Decision known = decide(input("h100", "b200"));
  EXPECT_FALSE(any_reason_contains(known, "the catalog does not know"));
  // The other way: what the old GPU executes and the catalog cannot tell of the new one.
  const Decision back = decide(input("b200", "tpu-v7x"));
  EXPECT_TRUE(any_reason_contains(back, "whether Google TPU v7x does, the catalog does not know: check the vendor's "
                                        "documentation before counting it kept or lost"));
}

TEST(Decide, NeededFp4IsACapabilityGap) {
  DecideInput in = input("h200", "b200");
  in.need = {Dtype::bf16, Dtype::nvfp4};
  const Decision d = decide(in);
  EXPECT_EQ(d.verdict, "upgrade-for-capability");
  EXPECT_TRUE(d.capability_gap);
  EXPECT_EQ(d.missing_dtypes, std::vector<Dtype>{Dtype::nvfp4});
}

TEST(Decide, SameGenerationRefreshHasNoGap) {
  DecideInput in = input("b200", "b300");
  in.need = {Dtype::fp4};
  const Decision d = decide(in);
  EXPECT_FALSE(d.capability_gap);
  EXPECT_EQ(d.verdict, "measure");
}

TEST(Decide, NewGpuLackingTheDtypeSaysSo) {
  DecideInput in = input("a100-sxm", "h100-sxm");
  in.need = {Dtype::fp4};
  EXPECT_EQ(decide(in).verdict, "new-gpu-lacks-capability");
}

// The other way round: the old GPU executes a needed dtype and the new one cannot. The new GPU
// scores zero there; "either" is said only of a dtype neither executes.
TEST(Decide, ANeededDtypeTheNewGpuLosesIsSaidAsLost) {
  DecideInput in = input("b200", "h200");
  in.need = {Dtype::nvfp4};
  const Decision d = decide(in);
  EXPECT_EQ(d.verdict, "new-gpu-lacks-capability");
  EXPECT_EQ(d.lost_dtypes, std::vector<Dtype>{Dtype::nvfp4});
  EXPECT_TRUE(any_reason_contains(d, "executes and NVIDIA H200 SXM cannot: the new GPU scores zero there"));
  for (const std::string& r : d.reasons) EXPECT_EQ(r.find("either"), std::string::npos) << r;
  DecideInput neither = input("a100-sxm", "h100-sxm");
  neither.need = {Dtype::fp4};
  const Decision n = decide(neither);
  EXPECT_TRUE(n.lost_dtypes.empty());
  EXPECT_TRUE(any_reason_contains(n, "cannot execute fp4 either"));
}

// A ceiling the catalog does not publish makes the spec bound one-sided: no "costlier per token"
// drawn from the bandwidth alone (the RTX PRO 6000's bf16 peak is not published).
TEST(Decide, AnUnpublishedCeilingDrawsNoCostVerdict) {
  DecideInput in = input("h200", "rtx-pro-6000-server");
  in.price_from = 4.0;
  in.price_to = 1.5;
  const Decision d = decide(in);
  EXPECT_EQ(d.verdict, "measure");
  EXPECT_TRUE(any_reason_contains(d, "is not published, so the spec bound is one-sided"));
  for (const std::string& r : d.reasons) EXPECT_EQ(r.find("extra memory"), std::string::npos) << r;
}

TEST(Decide, BreakEvenIsThePriceRatio) {
  DecideInput in = input("h200", "b200");
  in.price_from = 3.0;
  in.price_to = 6.0;
  const Decision d = decide(in);
  EXPECT_DOUBLE_EQ(*d.break_even_speedup, 2.0);
  EXPECT_EQ(d.verdict, "measure");  // compute ceiling 2.28x is above 2.0x
  EXPECT_TRUE(any_reason_contains(d, "bandwidth-bound work cannot reach it"));
}

TEST(Decide, PriceAboveEveryCeilingIsCostlierPerToken) {
  DecideInput in = input("h200", "b200");
  in.price_from = 2.0;
  in.price_to = 5.0;  // 2.5x > 2.28x compute and 1.67x bandwidth
  EXPECT_EQ(decide(in).verdict, "costlier-per-token");
}

// With a measurement of the old GPU only, part 2 is PREDICTED: each length's speedup interval
// against the break-even decides the verdict when every length agrees, and the reasons say so.
TEST(Decide, PredictedPartTwoFromTheOldGpuAlone) {
  const auto prediction = [](double low, double point, double high, const char* verdict) {
    Prediction p;
    p.input.path = "h200.jsonl", p.input.seqlen = 8192, p.old_id = "h200-sxm";
    p.speedup = point, p.speedup_low = low, p.speedup_high = high;
    p.limiting = "gemm (70% of the predicted step, 2.20x)";
    p.cost_verdict = verdict;
    return p;
  };
  DecideInput in = input("h200", "b200");
  in.price_from = 3.5, in.price_to = 4.0;  // break-even 1.14x, below every ceiling
  in.predicted = {prediction(1.6, 1.7, 2.2, "CHEAPER per token"), prediction(1.7, 1.9, 2.3, "CHEAPER per token")};
  Decision d = decide(in);
  EXPECT_EQ(d.verdict, "predicted-cheaper-per-token");
  const auto predicted = std::count_if(d.reasons.begin(), d.reasons.end(),
                                       [](const std::string& r) { return r.rfind("PREDICTED at 8192", 0) == 0; });
  EXPECT_EQ(predicted, 2);
  in.predicted[1].cost_verdict = "AMBIGUOUS (the break-even is inside the interval)";
  EXPECT_EQ(decide(in).verdict, "measure");  // the lengths disagree
  in.predicted = {prediction(1.1, 1.2, 1.3, "COSTLIER per token")};
  EXPECT_EQ(decide(in).verdict, "predicted-costlier-per-token");
  in.predicted[0].speedup.reset();  // N/A: no verdict from it
  EXPECT_EQ(decide(in).verdict, "measure");
}

TEST(Decide, BadPricesAreUsageErrors) {
  DecideInput in = input("h200", "b200");
  in.price_from = -1.0;
  in.price_to = 2.0;
  EXPECT_THROW(decide(in), UsageError);
  in.price_from = 1.0;
  in.price_to = std::nullopt;
  EXPECT_THROW(decide(in), UsageError);
}

TEST(Decide, ModelStateMemoryIsCounted) {
  DecideInput in = input("h200", "b200");
  in.model = load_model("llama-3.1-70b", std::string(UB_DATA_DIR) + "/models");
  const Decision d = decide(in);
  // 70.55B params * 16 B = 1051 GiB: 9 H200 at 130 GiB, 7 B200 at 167 GiB (the capacity rule's).
  EXPECT_TRUE(any_reason_contains(d, "at least 9 h200-sxm vs 7 b200-sxm")) << d.reasons[2];
}

}  // namespace
}  // namespace ub

namespace ub {
namespace {

// fp8 is a capability gap from an A100 (sm_80 has no fp8 matrix units), not from an H100; a
// dtype the recipe needs that both execute is said, and what the new GPU adds beyond it is named
// with what each kind is for.
TEST(Decide, Fp8IsAGapFromAnA100NotFromAnH100) {
  DecideInput a100 = input("a100", "h100");
  a100.need = {Dtype::fp8};
  const Decision from_a100 = decide(a100);
  EXPECT_EQ(from_a100.missing_dtypes, (std::vector<Dtype>{Dtype::fp8}));
  EXPECT_EQ(from_a100.verdict, "upgrade-for-capability");

  DecideInput h100 = input("h100", "b200");
  h100.need = {Dtype::fp8};
  const Decision from_h100 = decide(h100);
  EXPECT_TRUE(from_h100.missing_dtypes.empty());
  EXPECT_TRUE(any_reason_contains(from_h100, "execute fp8: no gap there"));
  EXPECT_TRUE(any_reason_contains(from_h100, "executes fp6, fp4, nvfp4, mxfp8, mxfp4, which NVIDIA H100 SXM cannot"));
  EXPECT_TRUE(any_reason_contains(from_h100, "FP4 / FP6 inference, microscaling training"));

  const Decision plain = decide(input("a100", "h100"));
  EXPECT_TRUE(any_reason_contains(plain, "(fp8 training and inference)"));
  EXPECT_FALSE(any_reason_contains(plain, "FP4")) << "an A100 -> H100 upgrade adds no FP4";
}

}  // namespace
}  // namespace ub
