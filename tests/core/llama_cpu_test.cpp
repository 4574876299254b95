// The CPU reference training step: gradients against central finite differences, the loss at
// initialisation, rotary frequencies, AdamW and clipping by hand, and golden losses of a few
// training steps on the tiny preset (regenerate with UB_UPDATE_GOLDEN=1).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <numbers>
#include <set>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "facts/model_shape.hpp"
#include "model/counter_rng.hpp"
#include "model/llama_layout.hpp"
#include "model/reference/llama_cpu.hpp"
#include "model/rope.hpp"

namespace ub {
namespace {

ModelShape tiny() { return load_model("llama-tiny", UB_DATA_DIR "/models"); }

std::vector<double> to_double(const std::vector<float>& f) { return {f.begin(), f.end()}; }

TEST(LlamaCpu, LossAtInitialisationIsNearLogVocab) {
  const ModelShape m = tiny();
  const LlamaLayout l = llama_layout(m);
  const auto p = to_double(llama_init_parameters(l, 7));
  const auto tokens = synthetic_tokens(11, 2, 32, m.vocab);
  const LlamaCpuResult r = llama_cpu_step(m, l, p, tokens, 2, 32, false);
  EXPECT_NEAR(r.loss, std::log(static_cast<double>(m.vocab)), 0.05);
  EXPECT_EQ(r.logits.size(), static_cast<size_t>(2 * 32 * m.vocab));
}

// Central differences on sampled elements of every tensor; embedding rows of tokens that occur.
void check_gradients_by_finite_differences(const ModelShape& m) {
  const LlamaLayout l = llama_layout(m);
  auto p = to_double(llama_init_parameters(l, 3));
  // Larger weights than at initialisation so that every path carries a visible gradient.
  for (const ParamTensor& t : l.tensors) {
    for (size_t j = 0; j < t.count(); ++j) p[t.offset + j] += 0.2 * normal_at(99, t.offset + j);
  }
  const int64_t batch = 2, seqlen = 12;
  const auto tokens = synthetic_tokens(5, batch, seqlen, m.vocab);
  const LlamaCpuResult r = llama_cpu_step(m, l, p, tokens, batch, seqlen, true);
  ASSERT_TRUE(std::isfinite(r.loss));
  int checked = 0, nonzero = 0;
  for (const ParamTensor& t : l.tensors) {
    for (int s = 0; s < 6; ++s) {
      size_t j = random_bits(static_cast<uint64_t>(t.offset) + 17, static_cast<uint64_t>(s)) % t.count();
      if (t.name == "embed_tokens") j = static_cast<size_t>(tokens[static_cast<size_t>(s)]) * static_cast<size_t>(m.hidden) + j % static_cast<size_t>(m.hidden);
      const size_t i = t.offset + j;
      const double h = 1e-5, keep = p[i];
      p[i] = keep + h;
      const double up = llama_cpu_step(m, l, p, tokens, batch, seqlen, false).loss;
      p[i] = keep - h;
      const double down = llama_cpu_step(m, l, p, tokens, batch, seqlen, false).loss;
      p[i] = keep;
      const double fd = (up - down) / (2 * h), g = r.grads[i];
      EXPECT_NEAR(g, fd, 1e-8 + 1e-5 * std::abs(fd)) << t.name << "[" << j << "]";
      ++checked;
      nonzero += std::abs(g) > 1e-7;
    }
  }
  EXPECT_EQ(checked, static_cast<int>(6 * l.tensors.size()));
  EXPECT_GT(nonzero, checked * 3 / 4) << "too many zero gradients: the check would be empty";
}

TEST(LlamaCpu, GradientsMatchFiniteDifferencesUntied) {
  ModelShape m = tiny();
  m.tied_embeddings = false;
  check_gradients_by_finite_differences(m);
}

TEST(LlamaCpu, GradientsMatchFiniteDifferencesTiedWithLlama3Rope) {
  ModelShape m = tiny();
  m.tied_embeddings = true;
  m.rope_theta = 500000;
  m.rope_scaling = RopeScaling{"llama3", 8.0, 1.0, 4.0, 64};
  check_gradients_by_finite_differences(m);
}

// QK-norm (Qwen3): each query and key head RMS-normalised before the rotary embedding, with
// weights of their own per layer.
TEST(LlamaCpu, QkNormGradientsMatchFiniteDifferences) {
  ModelShape m = tiny();
  m.qk_norm = true;
  const LlamaLayout l = llama_layout(m);
  EXPECT_EQ(l[l.layers[0].q_norm].name, "layers.0.self_attn.q_norm");
  EXPECT_EQ(l[l.layers[1].k_norm].count(), static_cast<size_t>(m.head_dim));
  check_gradients_by_finite_differences(m);
}

// The tiny model with a mixture of experts in its second layer (the first stays dense, as
// DeepSeek's first_k_dense_replace keeps it): 8 experts, 2 per token, shared experts behind
// Qwen2-MoE's gate, the load-balancing loss in the loss.
ModelShape tiny_moe(RouterScoring scoring, bool normalize) {
  ModelShape m = tiny();
  m.moe = MoeShape{8, 2, 32, 1, 48, true, scoring, normalize, true, 0.01};
  m.moe_layers = {false, true};
  return m;
}

TEST(LlamaCpu, MoeGradientsMatchFiniteDifferences) {
  check_gradients_by_finite_differences(tiny_moe(RouterScoring::softmax, false));
  check_gradients_by_finite_differences(tiny_moe(RouterScoring::sigmoid, true));
}

// A sliding window in the first layer (Mistral's kind; the second stays full, as Gemma
// interleaves them): the gradients still match finite differences, the window changes the loss,
// and a window as long as the sequence is full attention.
TEST(LlamaCpu, SlidingWindowLayersMatchFiniteDifferences) {
  ModelShape m = tiny();
  m.windows = {4, 0};
  check_gradients_by_finite_differences(m);
  const LlamaLayout l = llama_layout(m);
  const auto p = to_double(llama_init_parameters(l, 3));
  const auto tokens = synthetic_tokens(5, 2, 12, m.vocab);
  const double windowed = llama_cpu_step(m, l, p, tokens, 2, 12, false).loss;
  m.windows = {12, 0};
  const double whole = llama_cpu_step(m, l, p, tokens, 2, 12, false).loss;
  m.windows.clear();
  const double full = llama_cpu_step(m, l, p, tokens, 2, 12, false).loss;
  EXPECT_EQ(whole, full);
  EXPECT_NE(windowed, full);
}

// The layout holds every parameter the model counts, each expert's once; the layer's tensors are
// one run of the flat buffer (the data-parallel units shard whole layers).
TEST(LlamaCpu, MoeLayoutHoldsEveryParameterTheModelCounts) {
  for (const ModelShape& m : {tiny_moe(RouterScoring::softmax, true), load_model("mixtral-8x7b", UB_DATA_DIR "/models"),
                              load_model("qwen3-30b-a3b", UB_DATA_DIR "/models")}) {
    const LlamaLayout l = llama_layout(m);
    int64_t held = 0;
    for (const ParamTensor& t : l.tensors) held += static_cast<int64_t>(t.count());
    EXPECT_EQ(held, m.parameter_count()) << m.id;
    for (size_t i = 0; i < l.layers.size(); ++i) {
      const LayerParams& lp = l.layers[i];
      EXPECT_EQ(lp.moe(), m.is_moe_layer(static_cast<int64_t>(i))) << m.id << " layer " << i;
      EXPECT_GE(lp.last, lp.down);
      if (i + 1 < l.layers.size()) {
        EXPECT_EQ(l.layers[i + 1].attn_norm, lp.last + 1);
      }
    }
  }
  const LlamaLayout l = llama_layout(tiny_moe(RouterScoring::softmax, true));
  EXPECT_EQ(l[l.layers[1].gate_up].rows, 8 * 2 * 32);
  EXPECT_EQ(l[l.layers[1].down].rows, 8 * 64);
  EXPECT_EQ(l[l.layers[1].shared_expert_gate].cols, 64);
}

TEST(LlamaCpu, TiedLayoutHasNoLmHead) {
  ModelShape m = tiny();
  m.tied_embeddings = true;
  const LlamaLayout tied = llama_layout(m);
  m.tied_embeddings = false;
  const LlamaLayout untied = llama_layout(m);
  EXPECT_EQ(tied.lm_head, tied.embed);
  EXPECT_NE(untied.lm_head, untied.embed);
  EXPECT_EQ(untied.tensors.size(), tied.tensors.size() + 1);
  EXPECT_EQ(tied.tensors.size(), 1 + 6 * static_cast<size_t>(m.layers) + 1);  // embed, layers, norm
}

TEST(Rope, Llama3ScalingKeepsHighFrequenciesAndDividesLowOnes) {
  const ModelShape m = load_model("llama-3.1-8b", UB_DATA_DIR "/models");
  ASSERT_TRUE(m.rope_scaling && m.rope_scaling->type == "llama3");
  const auto f = rope_inverse_frequencies(m);
  ASSERT_EQ(f.size(), 64u);
  EXPECT_DOUBLE_EQ(f[0], 1.0);  // wavelength 2 pi, far below 8192 / 4
  const double plain_last = std::pow(500000.0, -126.0 / 128.0);
  EXPECT_NEAR(f[63], plain_last / m.rope_scaling->factor, 1e-18);  // wavelength beyond 8192
  // A medium frequency lies between the plain and the divided value.
  for (size_t i = 0; i < f.size(); ++i) {
    const double plain = std::pow(500000.0, -2.0 * static_cast<double>(i) / 128.0);
    EXPECT_LE(f[i], plain * (1 + 1e-12));
    EXPECT_GE(f[i], plain / m.rope_scaling->factor * (1 - 1e-12));
  }
}

TEST(Rope, UnknownScalingTypeIsRefused) {
  ModelShape m = tiny();
  m.rope_scaling = RopeScaling{"yarn", 4.0, 1.0, 4.0, 4096};
  EXPECT_THROW(rope_inverse_frequencies(m), UsageError);
}

TEST(Rope, TableIsCosAndSinOfPositionTimesFrequency) {
  const ModelShape m = tiny();
  const RopeTable t = rope_table(m, 5);
  const auto f = rope_inverse_frequencies(m);
  EXPECT_FLOAT_EQ(t.cos[0], 1.0f);
  EXPECT_FLOAT_EQ(t.sin[0], 0.0f);
  EXPECT_NEAR(t.sin[static_cast<size_t>(3 * t.half + 1)], std::sin(3 * f[1]), 1e-6);
}

TEST(AdamW, OneStepByHand) {
  std::vector<double> p{1.0, -2.0}, m{0, 0}, v{0, 0};
  AdamWParams o;
  o.lr = 0.01, o.beta1 = 0.9, o.beta2 = 0.95, o.eps = 1e-8, o.weight_decay = 0.1, o.max_grad_norm = 0;
  adamw_cpu_step(p, m, v, {0.5, -0.25}, o, 1);
  // First step: m / (1 - b1) = g, v / (1 - b2) = g^2, so the update is lr * sign(g).
  EXPECT_NEAR(p[0], 1.0 * (1 - 0.001) - 0.01, 1e-9);
  EXPECT_NEAR(p[1], -2.0 * (1 - 0.001) + 0.01, 1e-9);
  EXPECT_NEAR(m[0], 0.05, 1e-15);
  EXPECT_NEAR(v[0], 0.05 * 0.25, 1e-15);
}

TEST(AdamW, ClipsByGlobalNorm) {
  std::vector<double> p{0, 0}, m{0, 0}, v{0, 0};
  AdamWParams o;
  o.max_grad_norm = 1.0;
  const double norm = adamw_cpu_step(p, m, v, {3.0, 4.0}, o, 1);
  EXPECT_DOUBLE_EQ(norm, 5.0);
  EXPECT_NEAR(m[0], 0.1 * 3.0 / (5.0 + 1e-6), 1e-12);  // g scaled by 1 / 5
  EXPECT_NEAR(m[1], 0.1 * 4.0 / (5.0 + 1e-6), 1e-12);
}

TEST(SyntheticTokens, BelowVocabMinus256AndReproducible) {
  const auto a = synthetic_tokens(1, 2, 4096, 128256);
  EXPECT_EQ(a, synthetic_tokens(1, 2, 4096, 128256));
  EXPECT_NE(a, synthetic_tokens(2, 2, 4096, 128256));
  std::set<int32_t> distinct(a.begin(), a.end());
  EXPECT_GT(distinct.size(), 4000u);
  for (int32_t t : a) ASSERT_TRUE(t >= 0 && t < 128256 - 256);
  for (int32_t t : synthetic_tokens(1, 1, 1000, 256)) ASSERT_TRUE(t >= 0 && t < 256);
}

TEST(CheckTrainable, RefusesWhatTheEngineCannotRun) {
  ModelShape m = tiny();
  m.head_dim = 12;
  EXPECT_THROW(check_trainable(m), UsageError);
  m = tiny();
  m.kv_heads = 3;
  EXPECT_THROW(check_trainable(m), UsageError);
  EXPECT_NO_THROW(check_trainable(tiny()));
}

// Five AdamW steps on one fixed batch of the tiny preset: losses kept in tests/golden (the
// GPU engine's test compares against the same file) and the model learns.
TEST(LlamaCpu, GoldenLossesOfTheTinyPreset) {
  const ModelShape m = tiny();
  const LlamaLayout l = llama_layout(m);
  auto p = to_double(llama_init_parameters(l, 1234));
  std::vector<double> mom(p.size(), 0.0), var(p.size(), 0.0);
  const auto tokens = synthetic_tokens(42, 2, 32, m.vocab);
  AdamWParams o;
  o.lr = 1e-2;
  nlohmann::json losses = nlohmann::json::array();
  for (int step = 1; step <= 5; ++step) {
    const LlamaCpuResult r = llama_cpu_step(m, l, p, tokens, 2, 32, true);
    losses.push_back(r.loss);
    adamw_cpu_step(p, mom, var, r.grads, o, step);
  }
  EXPECT_LT(losses.back().get<double>(), losses.front().get<double>() - 0.5) << losses.dump();
  const std::string path = UB_GOLDEN_DIR "/llama_tiny_losses.json";
  const nlohmann::json doc = {{"model", "llama-tiny"}, {"init_seed", 1234}, {"token_seed", 42}, {"batch", 2},
                              {"seqlen", 32}, {"lr", o.lr}, {"betas", {o.beta1, o.beta2}}, {"eps", o.eps},
                              {"weight_decay", o.weight_decay}, {"max_grad_norm", o.max_grad_norm},
                              {"losses", losses}};
  if (std::getenv("UB_UPDATE_GOLDEN")) {
    std::ofstream(path) << doc.dump(2) << "\n";
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path << " (run with UB_UPDATE_GOLDEN=1)";
  const nlohmann::json golden = nlohmann::json::parse(in);
  ASSERT_EQ(golden.at("losses").size(), losses.size());
  for (size_t i = 0; i < losses.size(); ++i) {
    EXPECT_NEAR(losses[i].get<double>(), golden["losses"][i].get<double>(), 1e-9 * golden["losses"][i].get<double>())
        << "step " << i + 1;
  }
}

}  // namespace
}  // namespace ub
