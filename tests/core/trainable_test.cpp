// What the engine trains and what it refuses before any GPU work: a mixture of experts, QK-norm,
// Gemma's MLP and norms by name; a sliding window where it does not hold the whole sequence.
#include "model/llama_layout.hpp"

#include <gtest/gtest.h>

#include "base/error.hpp"

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

TEST(Trainable, MoeIsRefusedNamingWhatTheEngineLacks) {
  EXPECT_EQ(refusal(preset("qwen3-30b-a3b"), 4096),
            "train: model qwen3-30b-a3b cannot be trained by the engine: it has a mixture of experts (128 experts, "
            "top 8), QK-norm; the engine trains Llama-family dense decoders (SwiGLU MLP, full causal attention) today; "
            "flops, memfit and predict count this model");
  EXPECT_NE(refusal(preset("mixtral-8x7b"), 4096).find("a mixture of experts (8 experts, top 2);"), std::string::npos);
  const std::string gemma = refusal(preset("gemma-3-27b"), 512);
  EXPECT_NE(gemma.find("QK-norm, a gelu_pytorch_tanh MLP, norms after attention and the MLP, query_pre_attn_scalar 168"),
            std::string::npos) << gemma;
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
