// FLOP accounting against hand-computed values (formats.md's convention).
#include "facts/flops.hpp"

#include <gtest/gtest.h>

#include "base/error.hpp"
#include "facts/step_gemms.hpp"

namespace ub {
namespace {

ModelShape preset(const std::string& id) { return load_model(id, std::string(UB_DATA_DIR) + "/models"); }

TEST(Flops, Llama31_8bAt8kIsTheGuidesFigure) {
  const StepFlops f = step_flops(preset("llama-3.1-8b"), 8192, {});
  // dense_N = (3*4096*14336 + 4096*(4096+2*1024+4096))*32 + 128256*4096 = 7504658432
  EXPECT_DOUBLE_EQ(dense_matmul_params(preset("llama-3.1-8b")), 7504658432.0);
  EXPECT_NEAR(f.total() / 1e12, 421.65, 0.005);
  EXPECT_NEAR(f.attention_share(), 0.125, 0.0005);
}

TEST(Flops, Llama31_8bAt256k) {
  const StepFlops f = step_flops(preset("llama-3.1-8b"), 262144, {});
  EXPECT_NEAR(f.total() / 1e12, 65847.0, 0.05);
  EXPECT_NEAR(f.attention_share(), 0.82, 0.005);
}

TEST(Flops, Llama31_70bHandComputed) {
  // (3*8192*28672 + 8192*(8192 + 2*1024 + 8192)) * 80 + 128256*8192
  const double n = (3.0 * 8192 * 28672 + 8192.0 * (8192 + 2048 + 8192)) * 80 + 128256.0 * 8192;
  const StepFlops f = step_flops(preset("llama-3.1-70b"), 4096, {});
  EXPECT_DOUBLE_EQ(f.dense, 6 * n * 4096);
  EXPECT_DOUBLE_EQ(f.attention, 6.0 * 4096 * 4096 * 128 * 64 * 80);
}

TEST(Flops, TiedSmallModelCountsTheEmbeddingOnce) {
  // llama-3.2-1b: (3*2048*8192 + 2048*(2048 + 2*512 + 2048)) * 16 + 128256*2048
  const double n = (3.0 * 2048 * 8192 + 2048.0 * (2048 + 1024 + 2048)) * 16 + 128256.0 * 2048;
  EXPECT_DOUBLE_EQ(dense_matmul_params(preset("llama-3.2-1b")), n);
}

TEST(Flops, QwenWithFourKvHeads) {
  // qwen2.5-7b: head_dim 3584/28 = 128; kv 4 heads -> 2*4*128 = 1024
  const double n = (3.0 * 3584 * 18944 + 3584.0 * (3584 + 1024 + 3584)) * 28 + 152064.0 * 3584;
  EXPECT_DOUBLE_EQ(dense_matmul_params(preset("qwen2.5-7b")), n);
}

TEST(Flops, NonCausalDoublesAttention) {
  FlopOptions nc;
  nc.causal = false;
  const auto m = preset("llama-3.1-8b");
  EXPECT_DOUBLE_EQ(step_flops(m, 8192, nc).attention, 2 * step_flops(m, 8192, {}).attention);
  EXPECT_DOUBLE_EQ(step_flops(m, 8192, nc).dense, step_flops(m, 8192, {}).dense);
}

TEST(Flops, PackedDocumentsCostSumOfSquares) {
  const auto m = preset("llama-3.1-8b");
  FlopOptions packed;
  packed.doc_len = 8192;
  // 32 documents of 8k in 256k: attention drops 32x, dense unchanged.
  const StepFlops full = step_flops(m, 262144, {}), p = step_flops(m, 262144, packed);
  EXPECT_DOUBLE_EQ(full.attention / p.attention, 32.0);
  EXPECT_DOUBLE_EQ(full.dense, p.dense);
  EXPECT_DOUBLE_EQ(sum_of_squared_doc_lengths(10, 4), 4 * 4 + 4 * 4 + 2 * 2);
  EXPECT_DOUBLE_EQ(sum_of_squared_doc_lengths(10, 20), 100);
}

TEST(Flops, ListedDocumentsCostTheirSquares) {
  const auto m = preset("llama-3.1-8b");
  FlopOptions listed;
  listed.docs = {4096, 12288};
  FlopOptions one;
  // 4k + 12k in 16k: (4^2 + 12^2) / 16^2 = 160 / 256 of one sequence's attention.
  EXPECT_DOUBLE_EQ(step_flops(m, 16384, listed).attention / step_flops(m, 16384, one).attention, 160.0 / 256.0);
  EXPECT_THROW(step_flops(m, 8192, listed), UsageError);  // they sum to 16k
  listed.doc_len = 1024;
  EXPECT_THROW(step_flops(m, 16384, listed), UsageError);  // both ways at once
}

TEST(Flops, BatchScalesLinearly) {
  FlopOptions b4;
  b4.batch = 4;
  const auto m = preset("mistral-7b");
  EXPECT_DOUBLE_EQ(step_flops(m, 4096, b4).total(), 4 * step_flops(m, 4096, {}).total());
}

TEST(Flops, HfuAddsOneForwardOfTheLayers) {
  const auto m = preset("llama-3.1-8b");
  FlopOptions r;
  r.recompute = true;
  const StepFlops mfu = step_flops(m, 8192, {}), hfu = step_flops(m, 8192, r);
  const double layers = dense_matmul_params(m) - 128256.0 * 4096;
  EXPECT_DOUBLE_EQ(hfu.dense - mfu.dense, 2 * layers * 8192);
  EXPECT_DOUBLE_EQ(hfu.attention, mfu.attention * 4 / 3);
  EXPECT_GT(hfu.total() / mfu.total(), 1.25);
  EXPECT_LT(hfu.total() / mfu.total(), 1.34);
}

// What FlashAttention's kernels execute: the backward pass recomputes the scores, one product of
// the forward's size more than the model's six; with checkpointing, two more for the forward again.
TEST(Flops, FlashBackwardCountsTheRecomputedScores) {
  const auto m = with_layers(preset("llama-3.1-8b"), 4);
  FlopOptions flash, both;
  flash.flash_backward = true;
  both.flash_backward = both.recompute = true;
  const StepFlops model = step_flops(m, 65536, {}), executed = step_flops(m, 65536, flash);
  EXPECT_DOUBLE_EQ(executed.dense, model.dense);
  EXPECT_DOUBLE_EQ(executed.attention, model.attention * 7 / 6);
  EXPECT_DOUBLE_EQ(step_flops(m, 65536, both).attention, model.attention * 9 / 6);
  // Our engine's 65536-token decomposition of 4 layers on an H200 (2026-12-04) counted 1042.20 TFLOP.
  EXPECT_NEAR(executed.total() / 1e12, 1042.20, 0.01);
}

TEST(Flops, LayersShrinkTheModel) {
  const auto m = with_layers(preset("llama-3.1-8b"), 4);
  const double n = (3.0 * 4096 * 14336 + 4096.0 * 10240) * 4 + 128256.0 * 4096;
  EXPECT_DOUBLE_EQ(dense_matmul_params(m), n);
  EXPECT_THROW(with_layers(preset("llama-3.1-8b"), 33), UsageError);
  EXPECT_THROW(with_layers(preset("llama-3.1-8b"), 0), UsageError);
}

TEST(Flops, NonPositiveSizesAreUsageErrors) {
  const auto m = preset("llama-3.1-8b");
  EXPECT_THROW(step_flops(m, 0, {}), UsageError);
  FlopOptions bad;
  bad.batch = -1;
  EXPECT_THROW(step_flops(m, 8, bad), UsageError);
}

}  // namespace
}  // namespace ub

namespace ub {
namespace {

TEST(Flops, MoeCountsTheActiveExperts) {
  // Qwen3-30B-A3B per layer: attention 2048*(4096 + 2*512 + 4096), router 2048*128, 8 of the 128
  // experts 3*2048*768 each; lm_head once.
  const double qwen = (2048.0 * (4096 + 1024 + 4096) + 2048.0 * 128 + 8 * 3.0 * 2048 * 768) * 48 + 151936.0 * 2048;
  EXPECT_DOUBLE_EQ(dense_matmul_params(preset("qwen3-30b-a3b")), qwen);
  // Mixtral-8x7B: 2 of 8 experts of 14336.
  const double mixtral = (4096.0 * (4096 + 2048 + 4096) + 4096.0 * 8 + 2 * 3.0 * 4096 * 14336) * 32 + 32000.0 * 4096;
  EXPECT_DOUBLE_EQ(dense_matmul_params(preset("mixtral-8x7b")), mixtral);
  EXPECT_DOUBLE_EQ(step_flops(preset("mixtral-8x7b"), 4096, {}).dense, 6 * mixtral * 4096);
}

TEST(Flops, AWindowCountsItsKeyPositions) {
  const ModelShape m = preset("mistral-7b-v0.1");  // every layer a window of 4096
  const double full = 6.0 * 8192 * 8192 * 128 * 32 * 32;
  // At 8k: 2*s*w - w^2 = 3/4 of s^2 (s*w - w^2/2 key positions against s^2/2).
  EXPECT_DOUBLE_EQ(step_flops(m, 8192, {}).attention, 0.75 * full);
  EXPECT_DOUBLE_EQ(step_flops(m, 4096, {}).attention, 6.0 * 4096 * 4096 * 128 * 32 * 32);  // the window holds it all
  EXPECT_DOUBLE_EQ(causal_attention_squares(10, 4), 2 * 10 * 4 - 16);
  EXPECT_DOUBLE_EQ(causal_attention_squares(10, 0), 100);
  // Packed documents: each document against the window, a short one whole.
  FlopOptions docs;
  docs.docs = {1024, 7168};
  const double squares = 1024.0 * 1024 + (2.0 * 7168 * 4096 - 4096.0 * 4096);
  EXPECT_DOUBLE_EQ(step_flops(m, 8192, docs).attention, 6.0 * squares * 128 * 32 * 32);
  FlopOptions non_causal;
  non_causal.causal = false;
  EXPECT_THROW(step_flops(m, 8192, non_causal), UsageError);
}

TEST(Flops, InterleavedWindowsCountEachLayer) {
  // Gemma-3-27B: every sixth of 62 layers full (10), the other 52 a window of 1024.
  const double s = 32768, w = 1024;
  const double squares = 10 * s * s + 52 * (2 * s * w - w * w);
  EXPECT_DOUBLE_EQ(step_flops(preset("gemma-3-27b"), 32768, {}).attention, 6.0 * squares * 128 * 32);
}

double total_flop(const std::vector<StepGemm>& gemms) {
  double f = 0;
  for (const StepGemm& g : gemms) f += g.flop() * static_cast<double>(g.count);
  return f;
}

TEST(StepGemms, TheStepsProductsAddUpToItsDenseFlops) {
  const ModelShape m = with_layers(preset("llama-3.1-8b"), 4);
  const double dense = step_flops(m, 8192, {}).dense;
  EXPECT_NEAR(total_flop(step_gemms(m, 8192, {})), dense, dense * 1e-12);
  // Tiles and loss chunks cut the rows, not the work.
  StepLevers cut;
  cut.mlp_tile = 3000, cut.loss_chunk = 4096;
  const auto tiled = step_gemms(m, 8192, cut);
  const double gate_up_again = 2.0 * 8192 * 4096 * 2 * 14336 * 4;  // the tiled backward's gate|up
  EXPECT_NEAR(total_flop(tiled), dense + gate_up_again, dense * 1e-12);
  EXPECT_NEAR(total_flop(distinct_shapes(tiled)), total_flop(tiled), dense * 1e-12);
}

TEST(StepGemms, CheckpointingRecomputesEveryForwardButTheDownProjection) {
  const ModelShape m = with_layers(preset("llama-3.1-8b"), 4);
  StepLevers ckpt;
  ckpt.checkpointing = true;
  const double dense = step_flops(m, 8192, {}).dense;
  const double again = 2.0 * 8192 * 4 * (4096.0 * 6144 + 4096.0 * 4096 + 4096.0 * 2 * 14336);
  EXPECT_NEAR(total_flop(step_gemms(m, 8192, ckpt)), dense + again, dense * 1e-12);
}

TEST(StepGemms, BalancedExpertsAddUpToTheActiveFlops) {
  // 4096 tokens x top 8 over 128 experts: 256 rows each, the router and experts' products are
  // exactly the active dense FLOPs.
  const ModelShape m = with_layers(preset("qwen3-30b-a3b"), 4);
  const double dense = step_flops(m, 4096, {}).dense;
  const auto g = step_gemms(m, 4096, {});
  EXPECT_NEAR(total_flop(g), dense, dense * 1e-12);
  for (const StepGemm& x : g) {
    if (x.name == "expert gate_up fwd") {
      EXPECT_EQ(x.shape(), "1536x256x2048");
      EXPECT_EQ(x.count, 4 * 128);
    }
    EXPECT_NE(x.name, "gate_up fwd");  // no dense MLP in an all-MoE model
  }
}

TEST(StepGemms, ShapesAsCublasLtIsCalled) {
  const auto g = step_gemms(preset("llama-3.1-8b"), 8192, {});
  auto find = [&](const std::string& name) {
    for (const StepGemm& x : g) {
      if (x.name == name) return x;
    }
    ADD_FAILURE() << name;
    return StepGemm{};
  };
  EXPECT_EQ(find("qkv fwd").shape(), "6144x8192x4096");  // (32 + 2 x 8) heads x 128
  EXPECT_EQ(find("qkv fwd").count, 32);
  EXPECT_EQ(find("down dgrad").shape(), "14336x8192x4096");
  EXPECT_EQ(find("gate_up wgrad").shape(), "4096x28672x8192");
  EXPECT_EQ(find("lm_head fwd").shape(), "128256x8192x4096");
  EXPECT_EQ(find("lm_head fwd").count, 1);
}

}  // namespace
}  // namespace ub
