// config.json parsing: presets, HF defaults and edge cases, and the errors for bad configs.
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
          {"num_attention_heads", 4}, {"vocab_size", 100}};
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
