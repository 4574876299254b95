// What the engine trains and what it refuses before any GPU work: QK-norm, Gemma's MLP and norms
// by name; the command line refuses a mixture of experts by name; windowed models train at any length.
#include "model/llama_layout.hpp"

#include <gtest/gtest.h>

#include "base/error.hpp"
#include "model/train_config.hpp"

namespace ub {
namespace {

ModelShape preset(const std::string& id) { return load_model(id, std::string(UB_DATA_DIR) + "/models"); }

std::string refusal(const ModelShape& m, int64_t seqlen) {
  try {
    check_training_step(m, 1, seqlen, 0);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Trainable, WhatTheEngineLacksIsRefusedByName) {
  EXPECT_EQ(refusal(preset("qwen3-30b-a3b"), 4096), "");  // the engine's step runs its experts and QK-norm
  EXPECT_EQ(refusal(preset("mixtral-8x7b"), 4096), "");
  EXPECT_EQ(refusal(preset("gemma-3-27b"), 512),
            "train: model gemma-3-27b cannot be trained by the engine: it has a gelu_pytorch_tanh MLP, norms after "
            "attention and the MLP, query_pre_attn_scalar 168; the engine trains Llama-family decoders (SwiGLU MLPs, "
            "dense or a mixture of experts; causal attention, full or in a window) today; flops, memfit and predict "
            "count this model");
}

// The command line's configuration refuses what the engine's step has not been checked with on a
// GPU, before any GPU work, naming it.
TEST(Trainable, TheCommandLineTimesOnlyWhatHasBeenChecked) {
  const auto validate = [](const std::string& id) {
    TrainConfig c;
    c.model = preset(id);
    c.seqlen = 4096;
    try {
      c.validate();
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(validate("qwen3-30b-a3b"),
            "train: model qwen3-30b-a3b has a mixture of experts (128 experts, top 8) and QK-norm, which `train` does "
            "not time yet: the engine's step with them has not been checked against its CPU reference on a GPU; flops, "
            "memfit and predict count this model");
  EXPECT_NE(validate("mixtral-8x7b").find("has a mixture of experts (8 experts, top 2), which `train` does not time yet"),
            std::string::npos);
  EXPECT_EQ(validate("llama-3.1-8b"), "");
}

TEST(Trainable, SlidingWindowModelsTrainAtAnyLength) {
  const ModelShape mistral = preset("mistral-7b-v0.1");
  EXPECT_EQ(refusal(mistral, 4096), "");
  EXPECT_EQ(refusal(mistral, 32768), "");
  EXPECT_EQ(refusal(preset("llama-3.1-8b"), 131072), "");
  EXPECT_TRUE(untrained_features(preset("mistral-7b")).empty());
}

}  // namespace
}  // namespace ub
