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

// The command line times the models the engine's step is checked with on a GPU: mixtures of
// experts and QK-norm too (tests/gpu/llama_engine_test.cpp).
TEST(Trainable, TheCommandLineTimesMixturesOfExpertsAndQkNorm) {
  for (const char* id : {"qwen3-30b-a3b", "mixtral-8x7b", "llama-3.1-8b"}) {
    TrainConfig c;
    c.model = preset(id);
    c.seqlen = 4096;
    EXPECT_NO_THROW(c.validate()) << id;
  }
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
