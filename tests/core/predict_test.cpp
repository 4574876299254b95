// `predict`'s model: the ml-engineering guide's H200 -> B200 decomposition reproduced from its
// bucket shares and the two GPUs' attention measurements; ratios from measurements over the
// catalog; N/A for an unknown figure rather than another GPU's; intervals that hold the point;
// the cost verdict against the break-even; a training log split by its attention share; a step
// carried to another length or depth, each bucket by its own work.
#include "analysis/predict/prediction.hpp"

#include <gtest/gtest.h>

#include "analysis/predict/projection.hpp"
#include "analysis/predict/step_inputs.hpp"
#include "base/error.hpp"
#include "facts/flops.hpp"
#include "facts/model_shape.hpp"
#include "records/readers/decomposition_log.hpp"
#include "records/readers/read_run.hpp"

namespace ub {
namespace {

const std::string kFixtures = UB_FIXTURES_DIR;

LineSource fixture(const std::string& name) { return LineSource::file(kFixtures + "/" + name); }

struct Gpus {
  Catalog cat = Catalog::load(std::string(UB_DATA_DIR) + "/accelerators.json");
  const Accelerator& h200 = cat.find("h200-sxm");
  const Accelerator& b200 = cat.find("b200-sxm");
};

const Catalog& catalog() {
  static const Catalog cat = Catalog::load(std::string(UB_DATA_DIR) + "/accelerators.json");
  return cat;
}

MeasuredRates attention_of(const std::string& name) { return read_measured(fixture(name), catalog()).rates; }

TEST(Predict, ADecompositionsBucketsScaleByTheirWorkAndWhatItDoesNotExplain) {
  Gpus g;
  const std::vector<StepInput> in = steps_from_decompositions(fixture("decompose_h200.txt"));
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0].seqlen, 8192);
  const Prediction p = predict_step(in[0], g.h200, g.b200, attention_of("attention_h200.log"),
                                    attention_of("attention_b200.log"), {});
  ASSERT_TRUE(p.step_ms.has_value());
  // Attention scaled by the measured kernels, one part.
  EXPECT_NE(p.buckets[0].ratio->source.find("measured attention at 8192"), std::string::npos);
  ASSERT_EQ(p.buckets[0].parts.size(), 1u);
  // Everything else: its FLOPs at the H200's published MAMF by the matmul ratio, the rest of its
  // time between 1.0x and HBM's ratio; the two parts add up to the bucket.
  const PredictedBucket& rest = p.buckets[1];
  ASSERT_EQ(rest.parts.size(), 2u);
  EXPECT_NEAR(rest.parts[0].old_ms, 368.87 / 794.5 * 1e3, 0.1);
  EXPECT_NEAR(rest.parts[0].old_ms + rest.parts[1].old_ms, rest.old_ms, 1e-9);
  EXPECT_NEAR(rest.parts[0].ratio.point, 1745.0 / 794.5, 1e-9);
  EXPECT_NEAR(rest.parts[1].ratio.point, (1 + 8.0 / 4.8) / 2, 1e-9);
  EXPECT_DOUBLE_EQ(rest.parts[1].ratio.low, 1.0);
  EXPECT_NEAR(*rest.ms, rest.parts[0].old_ms / rest.parts[0].ratio.point + rest.parts[1].old_ms / rest.parts[1].ratio.point, 1e-9);
  EXPECT_LE(*p.speedup_low, *p.speedup);
  EXPECT_GE(*p.speedup_high, *p.speedup);
  EXPECT_EQ(p.fits, true);  // 99 GiB measured, the B200's capacity is larger
  // What to measure next narrows the interval.
  ASSERT_TRUE(p.next.has_value());
  EXPECT_LT(p.next->speedup_high - p.next->speedup_low, *p.speedup_high - *p.speedup_low);
}

// One step, three ways of carrying it: our engine's decomposition (GEMMs their own bucket), the
// same buckets lumped into bench_decompose.py's two (attention, everything else), and everything
// else with its idle time apportioned into it as a wall-clock share is. Each predicts a speedup
// inside the others' intervals.
TEST(Predict, OneStepPredictsOneSpeedupWhicheverWayItsBucketsCome) {
  Gpus g;
  StepInput split = steps_from_decompositions(fixture("engine_llama_2l_4096.jsonl")).at(0);
  add_model(split, with_layers(load_model("llama-3.1-8b", std::string(UB_DATA_DIR) + "/models"), 2));
  ASSERT_FALSE(split.gemms.empty());
  StepInput lumped = split, walled = split;
  const auto lump = [](StepInput& s, bool with_idle) {
    StepInput::Bucket rest{"everything else", 0, WorkKind::dense_mixed, std::nullopt};
    std::vector<StepInput::Bucket> kept;
    for (const StepInput::Bucket& b : s.buckets) {
      const bool dense = b.kind == WorkKind::matmul || b.kind == WorkKind::memory || b.kind == WorkKind::unknown;
      if (dense || (with_idle && b.kind == WorkKind::unexplained)) {
        rest.ms += b.ms;
        if (b.tflop && b.kind == WorkKind::matmul) rest.tflop = *b.tflop;
      } else {
        kept.push_back(b);
      }
    }
    kept.push_back(rest);
    s.buckets = kept;
  };
  lump(lumped, false);
  lump(walled, true);
  PredictOptions po;
  po.catalog = &g.cat;
  std::vector<Prediction> ps;
  for (const StepInput* s : {&split, &lumped, &walled}) ps.push_back(predict_step(*s, g.h200, g.b200, {}, {}, po));
  for (const Prediction& a : ps) {
    for (const Prediction& b : ps) {
      EXPECT_GE(*a.speedup, *b.speedup_low) << a.input.buckets.size() << " buckets vs " << b.input.buckets.size();
      EXPECT_LE(*a.speedup, *b.speedup_high) << a.input.buckets.size() << " buckets vs " << b.input.buckets.size();
    }
  }
  EXPECT_NEAR(*ps[0].speedup, *ps[1].speedup, 0.1 * *ps[0].speedup);
}

// `mamf --shapes-of` records (a real run of a 2-layer step at 2k on an H200) time the step's own
// products: on the old GPU they replace the model's time at its ceiling; timed on both GPUs (here
// the new GPU's times are the old ones halved), the GEMMs' ratio is measured, said so, and exact.
TEST(Predict, TheStepsOwnProductsTimedOnBothGpusGiveAMeasuredGemmRatio) {
  Gpus g;
  const MeasuredFile old_shapes = read_measured(fixture("suite_h200_2l/mamf-step.jsonl"), catalog());
  ASSERT_EQ(old_shapes.gpu, "NVIDIA H200");
  ASSERT_FALSE(old_shapes.rates.gemm_shapes.empty());
  EXPECT_FALSE(old_shapes.rates.mamf_tflops.has_value()) << "a step's products are not a search for the ceiling";
  StepInput in;
  in.path = "t", in.seqlen = 2048, in.step_ms = 100;
  in.buckets = {{"gemm", 100, WorkKind::matmul, std::nullopt}};
  add_model(in, with_layers(load_model("llama-3.1-8b", std::string(UB_DATA_DIR) + "/models"), 2));
  MeasuredRates twice_as_fast = old_shapes.rates;
  for (ShapeTime& t : twice_as_fast.gemm_shapes) t.ms /= 2;
  PredictOptions po;
  po.catalog = &g.cat;
  const Prediction modelled = predict_step(in, g.h200, g.b200, old_shapes.rates, {}, po);
  const Prediction measured = predict_step(in, g.h200, g.b200, old_shapes.rates, twice_as_fast, po);
  const BucketPart& part = measured.buckets[0].parts[0];
  EXPECT_NEAR(part.ratio.point, 2.0, 1e-9);
  EXPECT_NE(part.ratio.source.find("timed on both GPUs"), std::string::npos) << part.ratio.source;
  EXPECT_NEAR(part.ratio.high - part.ratio.low, 2 * 0.03 * 2.0, 1e-9);
  // Timed on the old GPU only: the model's ratio, its time at the old GPU's ceiling the measured one.
  EXPECT_NE(modelled.buckets[0].parts[0].ratio.source.find("timed on the old GPU"), std::string::npos);
  EXPECT_GT(modelled.buckets[0].parts[0].ratio.high - modelled.buckets[0].parts[0].ratio.low, part.ratio.high - part.ratio.low);
}

TEST(Predict, CatalogFiguresWhereNothingIsMeasuredAndNaForAnUnknownOne) {
  Gpus g;
  StepInput in;
  in.path = "t", in.seqlen = 8192, in.step_ms = 100;
  in.buckets = {{"gemm", 60, WorkKind::matmul, std::nullopt}, {"attention", 20, WorkKind::attention, std::nullopt},
                {"optimizer", 10, WorkKind::memory, std::nullopt}, {"idle", 10, WorkKind::unscaled, std::nullopt}};
  const Prediction p = predict_step(in, g.h200, g.b200, {}, {}, {});
  ASSERT_TRUE(p.step_ms.has_value());
  EXPECT_NE(p.buckets[0].ratio->source.find("published"), std::string::npos);
  EXPECT_NE(p.buckets[1].ratio->source.find("peak ratio"), std::string::npos);
  EXPECT_DOUBLE_EQ(*p.buckets[3].ms, 10);  // idle is not scaled
  for (const PredictedBucket& b : p.buckets) {
    EXPECT_LE(b.ratio->low, b.ratio->point) << b.name;
    EXPECT_GE(b.ratio->high, b.ratio->point) << b.name;
  }
  // A GPU whose HBM bandwidth the catalog does not know: the memory-bound bucket and the total are N/A.
  Accelerator unknown = g.b200;
  unknown.bandwidth_tbps = Figure{};
  const Prediction q = predict_step(in, g.h200, unknown, {}, {}, {});
  EXPECT_FALSE(q.buckets[2].ratio.has_value());
  EXPECT_FALSE(q.step_ms.has_value());
  EXPECT_FALSE(q.speedup.has_value());
  ASSERT_FALSE(q.notes.empty());
  EXPECT_NE(q.notes.front().find("N/A"), std::string::npos);
}

TEST(Predict, TheCostVerdictComparesTheIntervalWithTheBreakEven) {
  Gpus g;
  StepInput in;
  in.path = "t", in.seqlen = 4096, in.step_ms = 100;
  in.buckets = {{"optimizer", 100, WorkKind::memory, std::nullopt}};  // 1.67x (1.58-1.75x) from HBM
  PredictOptions cheap{3.0, 4.0}, dear{3.0, 6.0}, close{3.0, 5.0};
  EXPECT_EQ(predict_step(in, g.h200, g.b200, {}, {}, cheap).cost_verdict, "CHEAPER per token");      // break-even 1.33x
  EXPECT_EQ(predict_step(in, g.h200, g.b200, {}, {}, dear).cost_verdict, "COSTLIER per token");      // 2.00x
  EXPECT_EQ(predict_step(in, g.h200, g.b200, {}, {}, close).cost_verdict.rfind("AMBIGUOUS", 0), 0u);  // 1.67x
  const Prediction p = predict_step(in, g.h200, g.b200, {}, {}, cheap);
  EXPECT_NEAR(*p.usd_per_mtoken_new / *p.usd_per_mtoken_old, (4.0 / 3.0) / *p.speedup, 1e-9);
}

TEST(Predict, ATrainingLogIsSplitByItsOwnLengthsOrByItsAttentionShareOfFlops) {
  std::vector<std::string> warnings;
  const std::string sweep = std::string(UB_DATA_DIR) + "/examples/sweep_h200_llama-3.1-8b-4layers.jsonl";
  const RunLog run = read_run_log(LineSource::file(sweep));
  // Without the model's FLOPs: each point by the attention share its records hold.
  const std::vector<StepInput> in = steps_from_training_log(run, {}, nullptr, 989, warnings);
  ASSERT_FALSE(in.empty());
  for (const StepInput& s : in) {
    ASSERT_EQ(s.buckets.size(), 2u);
    EXPECT_EQ(s.buckets[0].kind, WorkKind::attention);
    EXPECT_EQ(s.buckets[1].kind, WorkKind::dense_mixed);
    EXPECT_NEAR(s.buckets[0].ms + s.buckets[1].ms, s.step_ms, 1e-9);
    EXPECT_GT(s.buckets[0].ms, 0);
  }
  // With them, at three lengths or more: per-step time, dense work and attention, adding up to each step.
  const ModelShape m = with_layers(load_model("llama-3.1-8b", std::string(UB_DATA_DIR) + "/models"), 4);
  const StepFlopsAt flops = [&](int64_t s, bool recompute) -> std::optional<StepFlops> {
    FlopOptions fo;
    fo.recompute = recompute;
    return step_flops(m, s, fo);
  };
  const std::vector<StepInput> fitted = steps_from_training_log(run, {}, flops, 989, warnings);
  ASSERT_EQ(fitted.size(), in.size());
  for (const StepInput& s : fitted) {
    ASSERT_EQ(s.buckets.size(), 3u);
    EXPECT_EQ(s.buckets[0].kind, WorkKind::unexplained);
    EXPECT_GE(s.buckets[0].ms, 0);
    EXPECT_NEAR(s.buckets[0].ms + s.buckets[1].ms + s.buckets[2].ms, s.step_ms, 1e-6 * s.step_ms);
    EXPECT_NE(s.from.find("decomposed by its own"), std::string::npos);
  }
  // Records without the share (benchmark.py's logs, older records): without the model's FLOPs each
  // point is left out, said so, and the model is asked for (a usage error); with them it is split.
  const RunLog plain = read_run_log(fixture("records_h200.jsonl"));
  EXPECT_THROW(steps_from_training_log(plain, {}, nullptr, 989, warnings), UsageError);
  EXPECT_FALSE(warnings.empty());
  const auto quarter = [](int64_t, bool) {
    StepFlops f;
    f.dense = 3, f.attention = 1;
    return std::optional<StepFlops>(f);
  };
  const auto split = steps_from_training_log(plain, {}, quarter, 989, warnings);
  ASSERT_FALSE(split.empty());
  EXPECT_NEAR(split[0].buckets[0].ms, 0.25 * split[0].step_ms, 1e-9);
}

TEST(Predict, MeasuredFilesSayWhichGpuAndWhat) {
  const MeasuredFile m = read_measured(fixture("mamf_finder_real_h200.txt"), catalog());
  EXPECT_EQ(m.gpu, "NVIDIA H200");
  EXPECT_NEAR(*m.rates.mamf_tflops, 768.2, 1e-9);
  const MeasuredFile a = read_measured(fixture("attention_b200.log"), catalog());
  EXPECT_EQ(a.gpu, "NVIDIA B200");
  ASSERT_EQ(a.rates.attention_tflops.size(), 3u);
  const MeasuredFile n = read_measured(fixture("nccl_records_h200x2_plain.jsonl"), catalog());
  EXPECT_GT(*n.rates.busbw_gbps, 300);
  EXPECT_THROW(read_measured(fixture("decompose_h200.txt"), catalog()), UsageError);
}

// A 4-layer step of the engine's buckets, at 8k tokens.
StepInput four_layer_step() {
  StepInput in;
  in.path = "four.jsonl";
  in.seqlen = 8192;
  in.layers = 4;
  in.buckets = {{"gemm", 60, WorkKind::matmul, std::nullopt},      {"attention", 10, WorkKind::attention, std::nullopt},
                {"elementwise", 20, WorkKind::memory, std::nullopt}, {"loss", 4, WorkKind::memory, std::nullopt},
                {"optimizer", 6, WorkKind::memory, std::nullopt},    {"idle", 1, WorkKind::unscaled, std::nullopt}};
  in.step_ms = 101;
  in.step_tflop = 1;
  in.peak_memory_gib = 30;
  return in;
}

TEST(Predict, AStepCarriedToAnotherDepthGrowsEachBucketByItsWork) {
  const ModelShape m = load_model("llama-3.1-8b", std::string(UB_DATA_DIR) + "/models");
  const StepInput deep = project_to_layers(four_layer_step(), 32, m);
  const StepFlops a = step_flops(with_layers(m, 4), 8192, {}), b = step_flops(with_layers(m, 32), 8192, {});
  ASSERT_EQ(deep.buckets.size(), 6u);
  // GEMMs grow less than the layers (the lm_head does not grow), attention and element-wise as the layers.
  EXPECT_NEAR(deep.buckets[0].ms, 60 * b.dense / a.dense, 1e-9);
  EXPECT_LT(deep.buckets[0].ms, 60 * 8.0);
  EXPECT_GT(deep.buckets[0].ms, 60 * 5.0);
  EXPECT_NEAR(deep.buckets[1].ms, 80, 1e-9);
  EXPECT_NEAR(deep.buckets[2].ms, 160, 1e-9);
  EXPECT_NEAR(deep.buckets[3].ms, 4, 1e-12);  // the loss: one per step at any depth
  // The optimizer by the parameters: the embeddings and the lm_head do not grow.
  const double params = static_cast<double>(with_layers(m, 32).parameter_count()) /
                        static_cast<double>(with_layers(m, 4).parameter_count());
  EXPECT_NEAR(deep.buckets[4].ms, 6 * params, 1e-9);
  EXPECT_LT(params, 8.0);
  EXPECT_NEAR(deep.buckets[5].ms, 1, 1e-12);
  double sum = 0;
  for (const auto& x : deep.buckets) sum += x.ms;
  EXPECT_NEAR(deep.step_ms, sum, 1e-9);
  EXPECT_EQ(deep.layers, 32);
  EXPECT_EQ(deep.layers_carried_from, 4);
  EXPECT_NEAR(*deep.step_tflop, b.total() / 1e12, 1e-9);
  EXPECT_FALSE(deep.peak_memory_gib.has_value());
  EXPECT_NE(deep.from.find("carried from 4 to 32 layers"), std::string::npos);
  // And back: the same step.
  const StepInput back = project_to_layers(deep, 4, m);
  EXPECT_NEAR(back.step_ms, 101, 1e-9);
  EXPECT_EQ(back.layers_carried_from, 4);

  StepInput unknown = four_layer_step();
  unknown.layers.reset();
  EXPECT_THROW((void)project_to_layers(unknown, 32, m), UsageError);
  EXPECT_THROW((void)project_to_layers(four_layer_step(), 33, m), UsageError);  // deeper than the model
}

TEST(Predict, AStepCarriedToAnotherLengthGrowsEachBucketByItsWork) {
  const ModelShape m = with_layers(load_model("llama-3.1-8b", std::string(UB_DATA_DIR) + "/models"), 4);
  const StepInput longer = project_to_seqlen(four_layer_step(), 16384, m, {});
  const StepFlops a = step_flops(m, 8192, {}), b = step_flops(m, 16384, {});
  EXPECT_NEAR(longer.buckets[0].ms, 60 * b.dense / a.dense, 1e-9);
  EXPECT_NEAR(longer.buckets[1].ms, 10 * b.attention / a.attention, 1e-9);
  EXPECT_GT(longer.buckets[1].ms, 39);  // causal attention: about 4x for twice the tokens
  EXPECT_NEAR(longer.buckets[2].ms, 40, 1e-9);
  EXPECT_NEAR(longer.buckets[4].ms, 6, 1e-12);  // the optimizer does not see the tokens
  EXPECT_EQ(longer.carried_from, 8192);
  EXPECT_EQ(longer.seqlen, 16384);
  StepInput unknown = four_layer_step();
  unknown.seqlen.reset();
  EXPECT_THROW((void)project_to_seqlen(unknown, 4096, m, {}), UsageError);
}

}  // namespace
}  // namespace ub
