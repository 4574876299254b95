// config.json parsing: presets, HF defaults and edge cases, and the errors for bad configs; the
// mixture-of-experts and sliding-window descriptions, and the total and active parameters against
// the model cards.
#include "facts/model_shape.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"

namespace ub {
namespace {

using nlohmann::json;
const std::string kModels = std::string(UB_DATA_DIR) + "/models";

TEST(ModelShape, PresetsHaveTheHuggingFaceShapes) {
  struct Want { const char* id; int64_t h, i, l, nq, nkv, v; bool tied; };
  for (const Want& w : {Want{"llama-3.1-8b", 4096, 14336, 32, 32, 8, 128256, false},
                        Want{"llama-3.1-70b", 8192, 28672, 80, 64, 8, 128256, false},
                        Want{"llama-3.1-405b", 16384, 53248, 126, 128, 8, 128256, false},
                        Want{"llama-3.2-1b", 2048, 8192, 16, 32, 8, 128256, true},
                        Want{"llama-3.2-3b", 3072, 8192, 28, 24, 8, 128256, true},
                        Want{"qwen2.5-7b", 3584, 18944, 28, 28, 4, 152064, false},
                        Want{"mistral-7b", 4096, 14336, 32, 32, 8, 32768, false}}) {
    const ModelShape m = load_model(w.id, kModels);
    EXPECT_EQ(m.hidden, w.h) << w.id;
    EXPECT_EQ(m.intermediate, w.i) << w.id;
    EXPECT_EQ(m.layers, w.l) << w.id;
    EXPECT_EQ(m.heads, w.nq) << w.id;
    EXPECT_EQ(m.kv_heads, w.nkv) << w.id;
    EXPECT_EQ(m.vocab, w.v) << w.id;
    EXPECT_EQ(m.tied_embeddings, w.tied) << w.id;
  }
}

TEST(ModelShape, Llama8bParameterCountIsTheKnownOne) {
  // meta-llama/Llama-3.1-8B has 8,030,261,248 parameters.
  EXPECT_EQ(load_model("llama-3.1-8b", kModels).parameter_count(), 8030261248);
}

TEST(ModelShape, Llama3RopeScalingIsRead) {
  const ModelShape m = load_model("llama-3.1-8b", kModels);
  ASSERT_TRUE(m.rope_scaling);
  EXPECT_EQ(m.rope_scaling->type, "llama3");
  EXPECT_DOUBLE_EQ(m.rope_scaling->factor, 8.0);
  EXPECT_DOUBLE_EQ(m.rope_theta, 500000.0);
}

json minimal() {
  return {{"hidden_size", 64}, {"intermediate_size", 128}, {"num_hidden_layers", 2},
          {"num_attention_heads", 4}, {"num_key_value_heads", 4}, {"vocab_size", 100}};
}

// `c` refused by the parser with a message holding `want`.
void refused(const json& c, const std::string& want) {
  try {
    parse_hf_config(c, "cfg.json");
    ADD_FAILURE() << "read: " << c.dump();
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

TEST(ModelShape, EveryPresetLoads) {
  for (const std::string& id : list_presets(kModels)) EXPECT_NO_THROW(load_model(id, kModels)) << id;
}

// A window or experts in the config of a model type whose code has none count a model that does
// not run; a type the parser does not describe is refused by name.
TEST(ModelShape, WindowsAndExpertsOnlyWhereTheModelTypesCodeHasThem) {
  json c = minimal();
  c["model_type"] = "llama";
  EXPECT_NO_THROW(parse_hf_config(c, "t"));
  c["sliding_window"] = 1024;
  refused(c, "model_type 'llama' attends to every token");
  c = minimal();
  c["model_type"] = "llama";
  c["num_local_experts"] = 8, c["num_experts_per_tok"] = 2;
  refused(c, "model_type 'llama' has one MLP per layer");
  c["model_type"] = "mixtral", c["sliding_window"] = nullptr;
  EXPECT_NO_THROW(parse_hf_config(c, "t"));
  c = minimal();
  c["model_type"] = "frobnicator";
  refused(c, "model_type 'frobnicator' is not one upgradebench describes (gemma, gemma2,");
  c.erase("model_type");
  c["sliding_window"] = 16;
  EXPECT_NO_THROW(parse_hf_config(c, "t")) << "a hand-written config is taken as it says";
}

// Rotary and position fields are read, not skipped: a type transformers does not implement, a
// factor that is not positive, a scaling that is no object, a maximum of 0 positions are refused.
TEST(ModelShape, RotaryAndPositionFieldsAreChecked) {
  json c = minimal();
  c["rope_scaling"] = {{"rope_type", "bogus"}, {"factor", 8.0}};
  refused(c, "rope type 'bogus' is not one transformers implements");
  c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", -8.0}};
  refused(c, "its factors and original_max_position_embeddings must be positive");
  c["rope_scaling"] = "linear";
  refused(c, "rope_scaling must be an object");
  c = minimal();
  c["max_position_embeddings"] = 0;
  refused(c, "max_position_embeddings");
  c = minimal();
  c["rope_scaling"] = nullptr, c["rope_theta"] = 500000.0;
  EXPECT_NO_THROW(parse_hf_config(c, "t"));
  // A multimodal config's text model is its text_config: a top-level width that disagrees is refused.
  json nested = {{"model_type", "llava"}, {"text_config", minimal()}, {"hidden_size", 999}};
  refused(nested, "hidden_size is 999 at the top level and 64 in text_config");
  nested["hidden_size"] = 64;
  EXPECT_NO_THROW(parse_hf_config(nested, "t"));
}

TEST(ModelShape, MoeParametersAreTheModelCards) {
  // Qwen/Qwen3-30B-A3B's card: 30.5B total, 3.3B activated (lm_head and embedding both counted).
  const ModelShape q = load_model("qwen3-30b-a3b", kModels);
  EXPECT_EQ(q.parameter_count(), 30532122624);
  EXPECT_NEAR(static_cast<double>(q.active_parameter_count()) / 1e9, 3.3, 0.06);
  // Mixtral-8x7B: 46.7B total, 12.9B active (Mistral AI's announcement).
  const ModelShape x = load_model("mixtral-8x7b", kModels);
  EXPECT_EQ(x.parameter_count(), 46702792704);
  EXPECT_NEAR(static_cast<double>(x.active_parameter_count()) / 1e9, 12.9, 0.05);
  // A dense model is all active; Mistral-7B-v0.1 has 7,241,732,096 parameters.
  const ModelShape m = load_model("mistral-7b-v0.1", kModels);
  EXPECT_EQ(m.parameter_count(), 7241732096);
  EXPECT_EQ(m.active_parameter_count(), m.parameter_count());
}

TEST(ModelShape, MoeConfigsAreRead) {
  const ModelShape q = load_model("qwen3-30b-a3b", kModels);
  ASSERT_TRUE(q.moe);
  EXPECT_EQ(q.moe->experts, 128);
  EXPECT_EQ(q.moe->top_k, 8);
  EXPECT_EQ(q.moe->intermediate, 768);
  EXPECT_EQ(q.moe->shared_experts, 0);
  EXPECT_TRUE(q.moe->normalize_top_k);
  EXPECT_FALSE(q.moe->aux_loss);  // output_router_logits false
  EXPECT_DOUBLE_EQ(q.moe->aux_loss_coef, 0.001);
  EXPECT_TRUE(q.qk_norm);
  EXPECT_FALSE(q.has_windows());  // use_sliding_window false
  EXPECT_TRUE(q.is_moe_layer(0) && q.is_moe_layer(47));
  const ModelShape x = load_model("mixtral-8x7b", kModels);
  ASSERT_TRUE(x.moe);
  EXPECT_EQ(x.moe->intermediate, 14336);  // Mixtral's experts are intermediate_size wide
  EXPECT_TRUE(x.moe->normalize_top_k);    // its block always renormalises
  EXPECT_DOUBLE_EQ(x.moe->aux_loss_coef, 0.02);
  EXPECT_FALSE(x.qk_norm);
  EXPECT_FALSE(x.has_windows());  // sliding_window null
}

// Dimensions each within bounds whose product is no model: refused, not counted past 64 bits.
TEST(ModelShape, AModelPastAQuadrillionParametersIsRefused) {
  json c = minimal();
  for (const char* key : {"hidden_size", "intermediate_size", "num_hidden_layers"}) c[key] = int64_t{1} << 24;
  c["num_attention_heads"] = 1, c["num_key_value_heads"] = 1;
  try {
    (void)parse_hf_config(c, "huge.json");
    FAIL() << "a config past 1e15 parameters was read";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("huge.json: up to"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("beyond any model"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW((void)parse_hf_config(minimal(), "small.json"));
}

// A family's mixture-of-experts field in another known family's config is read by no code that
// runs it: refused by name, as is a negative count of full-attention layers before the windows.
TEST(ModelShape, FieldsOfAnotherFamilyAreRefused) {
  json c = minimal();
  c["model_type"] = "qwen3_moe", c["num_experts"] = 4, c["num_experts_per_tok"] = 2, c["moe_intermediate_size"] = 32;
  EXPECT_NO_THROW(parse_hf_config(c, "t"));
  c["first_k_dense_replace"] = 1000;
  refused(c, "first_k_dense_replace is not read by model_type 'qwen3_moe' (it is deepseek_v2's and deepseek_v3's)");
  c.erase("first_k_dense_replace");
  c["shared_expert_intermediate_size"] = 64;
  refused(c, "shared_expert_intermediate_size is not read by model_type 'qwen3_moe' (it is qwen2_moe's)");
  json m = minimal();
  m["model_type"] = "mixtral", m["num_local_experts"] = 4, m["num_experts_per_tok"] = 2, m["mlp_only_layers"] = {0};
  m["sliding_window"] = nullptr;
  refused(m, "mlp_only_layers is not read by model_type 'mixtral'");
  m.erase("mlp_only_layers");
  m["moe_intermediate_size"] = 1024;  // Mixtral's experts are intermediate_size wide, whatever this says
  refused(m, "moe_intermediate_size is not read by model_type 'mixtral'");
  m.erase("moe_intermediate_size");
  m["norm_topk_prob"] = false;  // Mixtral's block always renormalises
  refused(m, "norm_topk_prob is not read by model_type 'mixtral'");
  json q = minimal();
  q["model_type"] = "qwen2", q["sliding_window"] = 16, q["use_sliding_window"] = true, q["max_window_layers"] = -5;
  refused(q, "max_window_layers -5 is below 0");
}

TEST(ModelShape, WhichLayersHaveExperts) {
  json c = minimal();
  c["num_hidden_layers"] = 6;
  c["num_experts"] = 4, c["num_experts_per_tok"] = 2, c["moe_intermediate_size"] = 32;
  c["decoder_sparse_step"] = 2, c["first_k_dense_replace"] = 1, c["mlp_only_layers"] = {3};
  c["n_shared_experts"] = 2, c["scoring_func"] = "sigmoid";
  const ModelShape m = parse_hf_config(c, "t");
  std::vector<bool> moe;
  for (int64_t i = 0; i < 6; ++i) moe.push_back(m.is_moe_layer(i));
  EXPECT_EQ(moe, (std::vector<bool>{false, true, false, false, false, true}));
  EXPECT_EQ(m.moe->shared_experts, 2);
  EXPECT_EQ(m.moe->shared_intermediate, 32);
  EXPECT_EQ(m.moe->scoring, RouterScoring::sigmoid);
  // Two MoE layers: router 64*4, all 4 experts and the 2 shared ones 3*64*32 each; four dense
  // layers 3*64*128; attention 4*64*64 and two norms each; embedding, lm_head, final norm.
  const int64_t expert = 3 * 64 * 32, layer = 4 * 64 * 64 + 2 * 64;
  const int64_t total = 2 * (64 * 4 + 6 * expert) + 4 * 3 * 64 * 128 + 6 * layer + 2 * 100 * 64 + 64;
  EXPECT_EQ(m.parameter_count(), total);
  EXPECT_EQ(m.active_parameter_count(), total - 2 * 2 * expert);  // 2 of the 4 routed experts
  const ModelShape two = with_layers(m, 2);
  EXPECT_TRUE(two.is_moe_layer(1));
  EXPECT_EQ(two.parameter_count(), (64 * 4 + 6 * expert) + 3 * 64 * 128 + 2 * layer + 2 * 100 * 64 + 64);
}

TEST(ModelShape, WindowsPerLayer) {
  const ModelShape mistral = load_model("mistral-7b-v0.1", kModels);
  EXPECT_EQ(mistral.window(0), 4096);
  EXPECT_EQ(mistral.window(31), 4096);
  EXPECT_FALSE(load_model("mistral-7b", kModels).has_windows());  // v0.3: sliding_window null
  const ModelShape gemma = load_model("gemma-3-27b", kModels);
  int64_t full = 0;
  for (int64_t i = 0; i < gemma.layers; ++i) full += gemma.window(i) == 0 ? 1 : 0;
  EXPECT_EQ(full, 10);  // layers 5, 11, ..., 59: every sixth
  EXPECT_EQ(gemma.window(5), 0);
  EXPECT_EQ(gemma.window(6), 1024);
  EXPECT_TRUE(gemma.qk_norm);
  EXPECT_EQ(gemma.norms_per_layer, 4);
  EXPECT_EQ(gemma.mlp_activation, "gelu_pytorch_tanh");
  EXPECT_EQ(with_layers(gemma, 7).windows.size(), 7u);

  json c = minimal();
  c["num_hidden_layers"] = 4;
  c["sliding_window"] = 16;
  c["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention", "full_attention"};
  EXPECT_EQ(parse_hf_config(c, "t").windows, (std::vector<int64_t>{16, 0, 16, 0}));
  c.erase("layer_types");
  c["model_type"] = "qwen2";  // Qwen: windows only with use_sliding_window, from max_window_layers on
  EXPECT_TRUE(parse_hf_config(c, "t").windows.empty());
  c["use_sliding_window"] = true, c["max_window_layers"] = 3;
  EXPECT_EQ(parse_hf_config(c, "t").windows, (std::vector<int64_t>{0, 0, 0, 16}));
  {  // Qwen's configs default the window to 4096 where the key is left out; null is none.
    json d = c;
    d.erase("sliding_window");
    EXPECT_EQ(parse_hf_config(d, "t").windows, (std::vector<int64_t>{0, 0, 0, 4096}));
    d["sliding_window"] = nullptr;
    EXPECT_TRUE(parse_hf_config(d, "t").windows.empty());
  }
  // A layer named sliding_attention where no window is configured: transformers writes none such,
  // and counting it as full attention would be unsaid.
  c["use_sliding_window"] = false;
  c["layer_types"] = {"full_attention", "full_attention", "full_attention", "sliding_attention"};
  refused(c, "layer 3 is sliding_attention, and the config gives no window (sliding_window null or absent, or "
             "use_sliding_window false)");
  c = minimal();
  c["model_type"] = "llama";
  c["layer_types"] = {"sliding_attention", "full_attention"};
  refused(c, "layer 0 is sliding_attention, and the config gives no window");
  c.erase("layer_types");
  c["use_sliding_window"] = true;  // read by Qwen's configs alone
  refused(c, "use_sliding_window is not read by model_type 'llama'");
}

// Each model type's windows as its transformers config class resolves them: a window field the
// class does not read is refused (Mistral's code windows every layer, whatever layer_types says);
// Qwen3-MoE windows every layer when windows are on; Qwen2-MoE the even layers below its bound.
TEST(ModelShape, WindowsAreReadAsEachTypesConfigReadsThem) {
  json c = minimal();
  c["num_hidden_layers"] = 4, c["sliding_window"] = 16;
  for (const char* type : {"mistral", "mixtral"}) {
    json m = c;
    m["model_type"] = type;
    if (std::string(type) == "mixtral") m["num_local_experts"] = 4, m["num_experts_per_tok"] = 2;
    EXPECT_EQ(parse_hf_config(m, "t").windows, (std::vector<int64_t>{16, 16, 16, 16})) << type;
    m["layer_types"] = {"full_attention", "full_attention", "full_attention", "full_attention"};
    refused(m, std::string("layer_types is not read by model_type '") + type + "' (its code gives every layer the "
               "config's sliding_window)");
    m.erase("layer_types");
    m["max_window_layers"] = 2;
    refused(m, std::string("max_window_layers is not read by model_type '") + type + "'");
  }
  json q = c;
  q["model_type"] = "qwen3_moe", q["num_experts"] = 4, q["num_experts_per_tok"] = 2, q["moe_intermediate_size"] = 32;
  q["max_window_layers"] = 4;  // Qwen3-30B-A3B's config carries it; its class reads it not
  EXPECT_TRUE(parse_hf_config(q, "t").windows.empty());  // use_sliding_window defaults to false
  q["use_sliding_window"] = true;
  EXPECT_EQ(parse_hf_config(q, "t").windows, (std::vector<int64_t>{16, 16, 16, 16}));
  q["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention", "full_attention"};
  refused(q, "layer_types is not read by model_type 'qwen3_moe'");
  json q2 = c;
  q2["model_type"] = "qwen2_moe", q2["num_experts"] = 4, q2["num_experts_per_tok"] = 2, q2["moe_intermediate_size"] = 32;
  q2["shared_expert_intermediate_size"] = 0;
  q2["use_sliding_window"] = true, q2["max_window_layers"] = 3;
  EXPECT_EQ(parse_hf_config(q2, "t").windows, (std::vector<int64_t>{16, 0, 16, 0}));
  json g = c;
  g["model_type"] = "gemma3_text", g["max_window_layers"] = 2;
  refused(g, "max_window_layers is not read by model_type 'gemma3_text'");
  json l = c;
  l.erase("sliding_window");
  l["model_type"] = "llama", l["max_window_layers"] = 2;
  refused(l, "max_window_layers is not read by model_type 'llama'");
  json none = c;  // no model_type: Qwen's fields have no one reading
  none["use_sliding_window"] = true;
  refused(none, "no model_type, and use_sliding_window is read by Qwen's configs alone, each its own way: add the "
                "model_type the checkpoint has");
}

// A field a type's transformers config class defaults otherwise than a config left without it is
// read here (Mistral's 8 KV heads, not the heads; Qwen3-MoE's 768-wide experts, not
// intermediate_size): refused by name, with the class's default, never counted as another model.
TEST(ModelShape, AFieldWhoseTypeDefaultsItOtherwiseMustBeGiven) {
  json c = minimal();
  c["model_type"] = "mistral", c["sliding_window"] = 16;
  c.erase("num_key_value_heads");
  refused(c, "num_key_value_heads is left out, where model_type 'mistral''s transformers config takes 8");
  c["num_key_value_heads"] = 4;
  c.erase("sliding_window");
  refused(c, "sliding_window is left out, where model_type 'mistral''s transformers config takes 4096");
  c["sliding_window"] = nullptr;  // said: no window
  EXPECT_TRUE(parse_hf_config(c, "t").windows.empty());
  json m = minimal();  // Mixtral's class defaults its window to none, as a config left without one reads here
  m["model_type"] = "mixtral", m["num_local_experts"] = 4, m["num_experts_per_tok"] = 2;
  EXPECT_TRUE(parse_hf_config(m, "t").windows.empty());
  json q = minimal();
  q["model_type"] = "qwen3_moe", q["num_experts"] = 4, q["num_experts_per_tok"] = 2;
  refused(q, "moe_intermediate_size is left out, where model_type 'qwen3_moe''s transformers config takes 768");
  json q2 = minimal();
  q2["model_type"] = "qwen2_moe", q2["num_experts"] = 4, q2["num_experts_per_tok"] = 2, q2["moe_intermediate_size"] = 32;
  refused(q2, "shared_expert_intermediate_size is left out, where model_type 'qwen2_moe''s transformers config takes 5632");
}

// An activation transformers does not know builds no model there: refused by field and value,
// never counted as a gated MLP of another.
TEST(ModelShape, AnActivationTransformersDoesNotKnowIsRefused) {
  json c = minimal();
  c["hidden_act"] = "swish_banana";
  refused(c, "hidden_act 'swish_banana' is not an activation transformers knows");
  c["hidden_act"] = "relu";
  EXPECT_EQ(parse_hf_config(c, "t").mlp_activation, "relu");
  c["hidden_activation"] = "gelu_tanh";  // Gemma's field wins where both are given
  refused(c, "hidden_activation 'gelu_tanh' is not an activation transformers knows");
}

// RMSNorm's epsilon and the initialisation's spread are read as numbers, not taken for the default
// when a string, a null or a negative value stands there.
TEST(ModelShape, NormEpsilonAndInitialisationAreNumbers) {
  json c = minimal();
  c["rms_norm_eps"] = 1e-6;
  EXPECT_DOUBLE_EQ(parse_hf_config(c, "t").rms_norm_eps, 1e-6);
  for (const json& bad : {json("1e-5"), json(-1), json(nullptr), json(0), json(2)}) {
    c["rms_norm_eps"] = bad;
    refused(c, "rms_norm_eps is " + bad.dump() + ": a number above 0 and below 1");
  }
  c = minimal();
  c["initializer_range"] = "x";
  refused(c, "initializer_range is \"x\": a number above 0 and below 1");
  c["initializer_range"] = 0.02;
  EXPECT_NO_THROW(parse_hf_config(c, "t"));
}

TEST(ModelShape, WhatWeCannotDescribeIsRefusedByName) {
  json c = minimal();
  c["swiglu_limit"] = 7.0;  // gpt-oss
  refused(c, "cfg.json: field 'swiglu_limit' is not understood: upgradebench would count the wrong model");
  c = minimal();
  c["kv_lora_rank"] = 512;  // DeepSeek's latent attention
  refused(c, "field 'kv_lora_rank'");
  c = minimal();
  c["sliding_window"] = 8;
  c["layer_types"] = {"chunked_attention", "full_attention"};
  refused(c, "layer 0 has type 'chunked_attention'");
  c["layer_types"] = {"full_attention"};
  refused(c, "\"layer_types\" must list one type per layer (2)");
  c = minimal();
  c["model_type"] = "gemma2";
  c["sliding_window"] = 8;
  refused(c, "model_type 'gemma2' alternates windowed and full layers in its code");
  c = minimal();
  c["num_experts"] = 4, c["num_experts_per_tok"] = 5;
  refused(c, "num_experts_per_tok 5 is more than the 4 experts");
  c["num_experts_per_tok"] = 2, c["router_jitter_noise"] = 0.01;
  refused(c, "router_jitter_noise 0.01 is not understood");
  c = minimal();
  c["model_type"] = "qwen3_moe", c["moe_intermediate_size"] = 32;
  refused(c, "is a mixture of experts but the config gives no expert count");
  // What leaves the architecture alone passes.
  c = minimal();
  c["torch_dtype"] = "bfloat16", c["initializer_range"] = 0.02, c["eos_token_id"] = json::array({1, 2});
  c["attention_dropout"] = 0.0, c["transformers_version"] = "4.51.0";
  EXPECT_NO_THROW(parse_hf_config(c, "t"));
}

TEST(ModelShape, RopeParametersOfTransformers5AreRead) {
  json c = minimal();
  c["rope_parameters"] = {{"rope_theta", 1000000.0}, {"rope_type", "default"}};
  const ModelShape m = parse_hf_config(c, "t");
  EXPECT_DOUBLE_EQ(m.rope_theta, 1000000.0);
  EXPECT_FALSE(m.rope_scaling);
}

TEST(ModelShape, MissingKvHeadsMeansEqualToHeads) {
  const ModelShape m = parse_hf_config(minimal(), "t");
  EXPECT_EQ(m.kv_heads, 4);
  EXPECT_EQ(m.head_dim, 16);
  EXPECT_FALSE(m.tied_embeddings);
}

TEST(ModelShape, HeadDimWinsWhenGivenAndNullIsIgnored) {
  json c = minimal();
  c["head_dim"] = 32;
  EXPECT_EQ(parse_hf_config(c, "t").head_dim, 32);
  c["head_dim"] = nullptr;
  EXPECT_EQ(parse_hf_config(c, "t").head_dim, 16);
}

TEST(ModelShape, TextConfigIsFollowed) {
  json c = {{"model_type", "llava"}, {"text_config", minimal()}, {"tie_word_embeddings", true}};
  const ModelShape m = parse_hf_config(c, "t");
  EXPECT_EQ(m.hidden, 64);
  EXPECT_TRUE(m.tied_embeddings);
}

TEST(ModelShape, MissingKeyIsNamed) {
  json c = minimal();
  c.erase("vocab_size");
  try {
    parse_hf_config(c, "cfg.json");
    FAIL();
  } catch (const WorkError& e) {
    EXPECT_STREQ(e.what(), "cfg.json: missing required key \"vocab_size\"");
  }
}

TEST(ModelShape, BadValuesAreErrors) {
  json c = minimal();
  c["hidden_size"] = -64;
  EXPECT_THROW(parse_hf_config(c, "t"), WorkError);
  c = minimal();
  c["hidden_size"] = "64";
  EXPECT_THROW(parse_hf_config(c, "t"), WorkError);
  c = minimal();
  c["tie_word_embeddings"] = "yes";  // a wrongly typed field: named, not nlohmann's type_error
  try {
    parse_hf_config(c, "cfg.json");
    ADD_FAILURE() << "read";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("cfg.json: \"tie_word_embeddings\" must be true or false"), std::string::npos)
        << e.what();
  }
  c = minimal();
  c["rope_scaling"] = {{"rope_type", 5}};  // what the fuzzer found
  EXPECT_THROW(parse_hf_config(c, "t"), WorkError);
  c = minimal();
  c["intermediate_size"] = int64_t{1} << 42;  // sizes whose products would leave 64 bits
  EXPECT_THROW(parse_hf_config(c, "t"), WorkError);
  c = minimal();
  c["num_key_value_heads"] = 3;  // 4 heads are not a multiple of 3
  EXPECT_THROW(parse_hf_config(c, "t"), WorkError);
  c = minimal();
  c["hidden_size"] = 66;  // not divisible by 4 heads, no head_dim
  EXPECT_THROW(parse_hf_config(c, "t"), WorkError);
  EXPECT_THROW(parse_hf_config(json::array(), "t"), WorkError);
}

TEST(ModelShape, ConfigFileByPath) {
  const std::string dir = ::testing::TempDir() + "/model_dir";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << minimal().dump();
  EXPECT_EQ(load_model(dir, kModels).hidden, 64);  // a folder means its config.json
  EXPECT_EQ(load_model(dir + "/config.json", kModels).layers, 2);
  std::ofstream(dir + "/broken.json") << "{\"hidden_size\": ";
  EXPECT_THROW(load_model(dir + "/broken.json", kModels), WorkError);
}

TEST(ModelShape, UnknownPresetAndMissingFileAreUsageErrors) {
  try {
    load_model("llama-3.1-9b", kModels);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("llama-3.1-8b"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_model("/nonexistent/config.json", kModels), UsageError);
}

}  // namespace
}  // namespace ub
