// Hugging Face weights and token ids read into the engine's layout: real safetensors files written
// here byte by byte as the format specifies, in each naming a checkpoint uses (transformers 5's
// stacked experts, the Hub's one expert at a time for Qwen-MoE and Mixtral, sharded with an index),
// each placed where the layout says; and every way a file can be wrong refused by name.
#include "model/hf_checkpoint.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "model/cpu_adamw.hpp"
#include "model/safetensors.hpp"

namespace ub {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A tensor to write: F32 values, or BF16 / F16 / I32 / I64 bytes given as they are.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
  std::string dtype = "F32";
  std::string raw;  // when not F32
};

// A safetensors file: the header's length (u64, little-endian), the header, the data.
void write_safetensors(const fs::path& p, const std::map<std::string, Tensor>& tensors, const json& extra = json::object()) {
  json header = extra;
  std::string data;
  for (const auto& [name, t] : tensors) {
    std::string bytes = t.raw;
    if (t.dtype == "F32") bytes.assign(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
    header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {data.size(), data.size() + bytes.size()}}};
    data += bytes;
  }
  const std::string text = header.dump();
  std::string head(8, '\0');
  for (int i = 0; i < 8; ++i) head[static_cast<size_t>(i)] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  std::ofstream(p, std::ios::binary) << head << text << data;
}

class HfCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ub_hf_checkpoint_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Distinct values: tensor k's element i is k * 1000 + i (exact in fp32 and, for small ones, bf16).
Tensor numbered(std::vector<int64_t> shape, int k) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Tensor t{std::move(shape), std::vector<float>(static_cast<size_t>(n)), "F32", ""};
  for (int64_t i = 0; i < n; ++i) t.values[static_cast<size_t>(i)] = static_cast<float>(k * 1000 + i);
  return t;
}

ModelShape tiny_dense() {
  return parse_hf_config({{"model_type", "llama"}, {"hidden_size", 8}, {"intermediate_size", 12}, {"num_hidden_layers", 2},
                          {"num_attention_heads", 2}, {"num_key_value_heads", 1}, {"vocab_size", 20}},
                         "tiny.json");
}

// The tensors of tiny_dense() as LlamaForCausalLM.state_dict() names them, `layers` deep.
std::map<std::string, Tensor> dense_checkpoint(int64_t layers, bool tied_lm_head = false) {
  std::map<std::string, Tensor> t;
  int k = 1;
  t["model.embed_tokens.weight"] = numbered({20, 8}, k++);
  for (int64_t l = 0; l < layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t[p + "input_layernorm.weight"] = numbered({8}, k++);
    t[p + "self_attn.q_proj.weight"] = numbered({8, 8}, k++);
    t[p + "self_attn.k_proj.weight"] = numbered({4, 8}, k++);
    t[p + "self_attn.v_proj.weight"] = numbered({4, 8}, k++);
    t[p + "self_attn.o_proj.weight"] = numbered({8, 8}, k++);
    t[p + "post_attention_layernorm.weight"] = numbered({8}, k++);
    t[p + "mlp.gate_proj.weight"] = numbered({12, 8}, k++);
    t[p + "mlp.up_proj.weight"] = numbered({12, 8}, k++);
    t[p + "mlp.down_proj.weight"] = numbered({8, 12}, k++);
    t[p + "self_attn.rotary_emb.inv_freq"] = numbered({2}, k++);  // older checkpoints carry it
  }
  t["model.norm.weight"] = numbered({8}, k++);
  t["lm_head.weight"] = numbered({20, 8}, tied_lm_head ? 1 : k++);
  return t;
}

// The layout tensor named `name`.
const ParamTensor& tensor(const LlamaLayout& L, const std::string& name) {
  for (const ParamTensor& t : L.tensors) {
    if (t.name == name) return t;
  }
  throw std::runtime_error("no layout tensor " + name);
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const WorkError& e) {
    return e.what();
  } catch (const UsageError& e) {  // what the user gave cannot be read at all (missing, a folder)
    return std::string("usage: ") + e.what();
  }
  return "(no error)";
}

TEST_F(HfCheckpoint, DenseWeightsLandWhereTheLayoutPutsThem) {
  const ModelShape m = tiny_dense();
  const LlamaLayout L = llama_layout(m);
  const auto ck = dense_checkpoint(2);
  write_safetensors(dir_ / "model.safetensors", ck);
  const LoadedWeights w = load_hf_weights(dir_, m, L);
  ASSERT_EQ(w.flat.size(), L.total);
  const auto at = [&](const std::string& name, size_t i) { return w.flat[tensor(L, name).offset + i]; };
  // qkv_proj = [q_proj; k_proj; v_proj]: row 8 is k's first, row 12 v's first.
  EXPECT_EQ(at("layers.1.self_attn.qkv_proj", 0), ck.at("model.layers.1.self_attn.q_proj.weight").values[0]);
  EXPECT_EQ(at("layers.1.self_attn.qkv_proj", 8 * 8 + 3), ck.at("model.layers.1.self_attn.k_proj.weight").values[3]);
  EXPECT_EQ(at("layers.1.self_attn.qkv_proj", 12 * 8 + 31), ck.at("model.layers.1.self_attn.v_proj.weight").values[31]);
  // gate_up_proj = [gate_proj; up_proj].
  EXPECT_EQ(at("layers.0.mlp.gate_up_proj", 12 * 8 + 5), ck.at("model.layers.0.mlp.up_proj.weight").values[5]);
  EXPECT_EQ(at("layers.0.mlp.down_proj", 95), ck.at("model.layers.0.mlp.down_proj.weight").values[95]);
  EXPECT_EQ(at("layers.0.input_layernorm", 7), ck.at("model.layers.0.input_layernorm.weight").values[7]);
  EXPECT_EQ(at("lm_head", 159), ck.at("lm_head.weight").values[159]);
  EXPECT_EQ(at("norm", 2), ck.at("model.norm.weight").values[2]);
  // Every element of every tensor came from the file: the sum of the layout equals the file's.
  double file_sum = 0, flat_sum = 0;
  for (const auto& [name, t] : ck) {
    if (name.find("inv_freq") == std::string::npos) {
      for (float v : t.values) file_sum += v;
    }
  }
  for (float v : w.flat) flat_sum += v;
  EXPECT_EQ(flat_sum, file_sum);
  EXPECT_EQ(w.skipped_layers, 0);
}

// The first layers of a checkpoint (--layers below the config's depth) are read, the others
// counted; a layer past the config's depth, or a name no layer has, is another model's.
TEST_F(HfCheckpoint, ADeeperCheckpointGivesItsFirstLayersAndSaysHowManyWereLeft) {
  ModelShape five = tiny_dense();
  five.config_layers = five.layers = 5;
  const ModelShape m = with_layers(five, 2);
  write_safetensors(dir_ / "w.safetensors", dense_checkpoint(5));
  const LoadedWeights w = load_hf_weights(dir_ / "w.safetensors", m, llama_layout(m));
  EXPECT_EQ(w.skipped_layers, 3);
  write_safetensors(dir_ / "w.safetensors", dense_checkpoint(6));
  EXPECT_NE(message_of([&] { load_hf_weights(dir_ / "w.safetensors", m, llama_layout(m)); })
                .find("tensor 'model.layers.5.input_layernorm.weight' is of layer 5, past the 5 layers of the model"),
            std::string::npos);
  auto odd = dense_checkpoint(5);
  odd["model.layers.3.nonsense.weight"] = numbered({3}, 90);
  write_safetensors(dir_ / "w.safetensors", odd);
  EXPECT_NE(message_of([&] { load_hf_weights(dir_ / "w.safetensors", m, llama_layout(m)); })
                .find("tensor 'model.layers.3.nonsense.weight' is not a parameter"),
            std::string::npos);
  // Without --layers, a checkpoint one layer deeper than the config is another model's.
  write_safetensors(dir_ / "w.safetensors", dense_checkpoint(3));
  EXPECT_NE(message_of([&] { load_hf_weights(dir_ / "w.safetensors", tiny_dense(), llama_layout(tiny_dense())); })
                .find("is of layer 2, past the 2 layers of the model"),
            std::string::npos);
}

TEST_F(HfCheckpoint, TiedEmbeddingsIgnoreTheSavedLmHead) {
  ModelShape m = tiny_dense();
  m.tied_embeddings = true;
  write_safetensors(dir_ / "w.safetensors", dense_checkpoint(2, true));
  const LlamaLayout L = llama_layout(m);
  EXPECT_EQ(load_hf_weights(dir_ / "w.safetensors", m, L).flat.size(), L.total);
}

TEST_F(HfCheckpoint, BareNamesAndHalfPrecisionAreRead) {
  const ModelShape m = tiny_dense();
  std::map<std::string, Tensor> bare;
  for (const auto& [name, t] : dense_checkpoint(2)) bare[name.rfind("model.", 0) == 0 ? name.substr(6) : name] = t;
  // The embedding in BF16 and the final norm in F16, with values both hold exactly.
  Tensor& e = bare["embed_tokens.weight"];
  e.dtype = "BF16", e.raw.clear();
  for (size_t i = 0; i < e.values.size(); ++i) {
    e.values[i] = static_cast<float>(i % 7) - 3.0f;
    const uint16_t b = bf16_bits(e.values[i]);
    e.raw += static_cast<char>(b & 0xFF), e.raw += static_cast<char>(b >> 8);
  }
  Tensor& n = bare["norm.weight"];
  n.dtype = "F16";
  n.raw.clear();
  const uint16_t halves[8] = {0x3C00, 0xC000, 0x3800, 0x0001, 0x7BFF, 0x0000, 0x8000, 0x3555};  // 1 -2 0.5 2^-24 65504 0 -0 ~1/3
  for (uint16_t h : halves) n.raw += static_cast<char>(h & 0xFF), n.raw += static_cast<char>(h >> 8);
  write_safetensors(dir_ / "w.safetensors", bare);
  const LlamaLayout L = llama_layout(m);
  const LoadedWeights w = load_hf_weights(dir_ / "w.safetensors", m, L);
  const size_t emb = tensor(L, "embed_tokens").offset, norm = tensor(L, "norm").offset;
  EXPECT_EQ(w.flat[emb + 9], 2.0f - 3.0f + 0.0f);  // 9 % 7 - 3
  EXPECT_EQ(w.flat[norm + 0], 1.0f);
  EXPECT_EQ(w.flat[norm + 1], -2.0f);
  EXPECT_EQ(w.flat[norm + 2], 0.5f);
  EXPECT_EQ(w.flat[norm + 3], std::ldexp(1.0f, -24));
  EXPECT_EQ(w.flat[norm + 4], 65504.0f);
  EXPECT_NEAR(w.flat[norm + 7], 1.0f / 3.0f, 1e-3);
}

ModelShape tiny_moe(const std::string& type) {
  json c = {{"model_type", type}, {"hidden_size", 8}, {"intermediate_size", 12}, {"num_hidden_layers", 1},
            {"num_attention_heads", 2}, {"num_key_value_heads", 1}, {"vocab_size", 20}, {"num_experts_per_tok", 2}};
  if (type == "mixtral") {
    c["num_local_experts"] = 3, c["sliding_window"] = nullptr;
  } else {
    c["num_experts"] = 3, c["moe_intermediate_size"] = 4;
  }
  return parse_hf_config(c, "moe.json");
}

// The attention and norms of a one-layer MoE checkpoint (the MLP is added per naming).
std::map<std::string, Tensor> moe_trunk() {
  std::map<std::string, Tensor> t = dense_checkpoint(1);
  for (const char* n : {"mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight"}) t.erase(std::string("model.layers.0.") + n);
  return t;
}

TEST_F(HfCheckpoint, ExpertsReadStackedOrOneAtATimeGiveTheSameWeights) {
  for (const std::string type : {"qwen3_moe", "mixtral"}) {
    const ModelShape m = tiny_moe(type);
    const int64_t E = 3, I = m.moe->intermediate, H = 8;
    const LlamaLayout L = llama_layout(m);
    const std::string p = "model.layers.0.";
    // transformers 5: gate_up_proj [E, 2I, H] (each expert's gate rows, then its up rows), down_proj [E, H, I].
    std::map<std::string, Tensor> stacked = moe_trunk();
    if (m.qk_norm) {  // Qwen3's
      stacked[p + "self_attn.q_norm.weight"] = numbered({4}, 40);
      stacked[p + "self_attn.k_norm.weight"] = numbered({4}, 41);
    }
    stacked[p + "mlp.gate.weight"] = numbered({E, H}, 50);
    stacked[p + "mlp.experts.gate_up_proj"] = numbered({E, 2 * I, H}, 60);
    stacked[p + "mlp.experts.down_proj"] = numbered({E, H, I}, 70);
    write_safetensors(dir_ / "stacked.safetensors", stacked);
    // The Hub's checkpoints: one expert at a time, Qwen-MoE's names or Mixtral's.
    std::map<std::string, Tensor> split = moe_trunk();
    for (const char* norm : {"self_attn.q_norm.weight", "self_attn.k_norm.weight"}) {
      if (m.qk_norm) split[p + norm] = stacked[p + norm];
    }
    const bool mixtral = type == "mixtral";
    split[p + (mixtral ? "block_sparse_moe.gate.weight" : "mlp.gate.weight")] = stacked[p + "mlp.gate.weight"];
    const Tensor& gu = stacked[p + "mlp.experts.gate_up_proj"];
    const Tensor& dn = stacked[p + "mlp.experts.down_proj"];
    for (int64_t e = 0; e < E; ++e) {
      const std::string x = p + (mixtral ? "block_sparse_moe.experts." : "mlp.experts.") + std::to_string(e) + ".";
      Tensor gate{{I, H}, {}, "F32", ""}, up{{I, H}, {}, "F32", ""}, down{{H, I}, {}, "F32", ""};
      const auto gu_at = gu.values.begin() + e * 2 * I * H;
      gate.values.assign(gu_at, gu_at + I * H);
      up.values.assign(gu_at + I * H, gu_at + 2 * I * H);
      down.values.assign(dn.values.begin() + e * H * I, dn.values.begin() + (e + 1) * H * I);
      split[x + (mixtral ? "w1.weight" : "gate_proj.weight")] = gate;
      split[x + (mixtral ? "w3.weight" : "up_proj.weight")] = up;
      split[x + (mixtral ? "w2.weight" : "down_proj.weight")] = down;
    }
    write_safetensors(dir_ / "split.safetensors", split);
    const LoadedWeights a = load_hf_weights(dir_ / "stacked.safetensors", m, L);
    const LoadedWeights b = load_hf_weights(dir_ / "split.safetensors", m, L);
    EXPECT_EQ(a.flat, b.flat) << type;
    // Expert 2's first up row is row 2 * 2I + I of the layout's gate_up_proj.
    EXPECT_EQ(a.flat[tensor(L, "layers.0.mlp.experts.gate_up_proj").offset + static_cast<size_t>((2 * 2 * I + I) * H)],
              gu.values[static_cast<size_t>((2 * 2 * I + I) * H)]);
    EXPECT_EQ(a.flat[tensor(L, "layers.0.mlp.gate").offset + 17], 50 * 1000 + 17);
    // One expert missing from the split checkpoint is named.
    split.erase(p + (mixtral ? "block_sparse_moe.experts.1.w3.weight" : "mlp.experts.1.up_proj.weight"));
    write_safetensors(dir_ / "split.safetensors", split);
    EXPECT_NE(message_of([&] { load_hf_weights(dir_ / "split.safetensors", m, L); })
                  .find(mixtral ? "no tensor 'model.layers.0.block_sparse_moe.experts.1.w3.weight'"
                                : "no tensor 'model.layers.0.mlp.experts.1.up_proj.weight'"),
              std::string::npos);
  }
}

TEST_F(HfCheckpoint, AShardedCheckpointIsReadThroughItsIndex) {
  const ModelShape m = tiny_dense();
  const auto ck = dense_checkpoint(2);
  std::map<std::string, Tensor> one, two;
  json map = json::object();
  for (const auto& [name, t] : ck) {
    const bool first = name.find("layers.1.") == std::string::npos;
    (first ? one : two)[name] = t;
    map[name] = first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  write_safetensors(dir_ / "model-00001-of-00002.safetensors", one);
  write_safetensors(dir_ / "model-00002-of-00002.safetensors", two);
  std::ofstream(dir_ / "model.safetensors.index.json") << json{{"metadata", {{"total_size", 0}}}, {"weight_map", map}}.dump();
  write_safetensors(dir_ / "whole.safetensors", ck);
  const LlamaLayout L = llama_layout(m);
  EXPECT_EQ(load_hf_weights(dir_, m, L).flat, load_hf_weights(dir_ / "whole.safetensors", m, L).flat);
  // A shard named outside the folder is refused, not opened.
  map["model.norm.weight"] = "../elsewhere.safetensors";
  std::ofstream(dir_ / "model.safetensors.index.json") << json{{"weight_map", map}}.dump();
  EXPECT_NE(message_of([&] { load_hf_weights(dir_, m, L); }).find("shards are files of the index's own folder"),
            std::string::npos);
}

TEST_F(HfCheckpoint, WeightsOfAnotherModelAreRefusedByName) {
  const ModelShape m = tiny_dense();
  const LlamaLayout L = llama_layout(m);
  const fs::path f = dir_ / "w.safetensors";
  auto ck = dense_checkpoint(2);
  ck["model.layers.0.self_attn.k_proj.weight"] = numbered({8, 8}, 99);  // as many kv heads as query heads
  write_safetensors(f, ck);
  EXPECT_NE(message_of([&] { load_hf_weights(f, m, L); })
                .find("tensor 'model.layers.0.self_attn.k_proj.weight' is [8, 8], the model needs [4, 8]"),
            std::string::npos);
  ck = dense_checkpoint(2);
  ck["model.layers.0.mlp.experts.gate_up_proj"] = numbered({2, 24, 8}, 98);
  write_safetensors(f, ck);
  EXPECT_NE(message_of([&] { load_hf_weights(f, m, L); }).find("tensor 'model.layers.0.mlp.experts.gate_up_proj' is not a parameter"),
            std::string::npos);
  ck = dense_checkpoint(2);
  ck.erase("model.norm.weight");
  write_safetensors(f, ck);
  EXPECT_NE(message_of([&] { load_hf_weights(f, m, L); }).find("no tensor 'model.norm.weight' for norm of the model (2 layers)"),
            std::string::npos);
  ck = dense_checkpoint(1);
  write_safetensors(f, ck);
  EXPECT_NE(message_of([&] { load_hf_weights(f, m, L); }).find("no tensor 'model.layers.1.input_layernorm.weight'"),
            std::string::npos);
  // The names and shapes alone are checked without reading a value.
  write_safetensors(f, dense_checkpoint(2));
  EXPECT_TRUE(load_hf_weights(f, m, L, WeightsRead::names_and_shapes).flat.empty());
  EXPECT_NE(message_of([&] { load_hf_weights(dir_, m, L); }).find("no model.safetensors or model.safetensors.index.json"),
            std::string::npos);
  // Integer weights, and weights that are not finite, are no model's.
  ck = dense_checkpoint(2);
  Tensor& norm = ck["model.norm.weight"];
  norm.dtype = "I64", norm.raw.assign(8 * 8, '\0');
  write_safetensors(f, ck);
  EXPECT_NE(message_of([&] { load_hf_weights(f, m, L, WeightsRead::names_and_shapes); })
                .find("tensor 'model.norm.weight' is I64: weights are read from F32, F16 or BF16"),
            std::string::npos);
  ck = dense_checkpoint(2);
  ck["model.layers.1.mlp.up_proj.weight"].values[7] = std::nanf("");
  write_safetensors(f, ck);
  EXPECT_NE(message_of([&] { load_hf_weights(f, m, L); }).find("tensor 'model.layers.1.mlp.up_proj.weight' holds nan at element 7"),
            std::string::npos);
  // A folder with both a whole checkpoint and an index, and an index given for its folder.
  write_safetensors(dir_ / "model.safetensors", dense_checkpoint(2));
  std::ofstream(dir_ / "model.safetensors.index.json") << R"({"weight_map": {}})";
  EXPECT_NE(message_of([&] { load_hf_weights(dir_, m, L); }).find("holds both model.safetensors and model.safetensors.index.json"),
            std::string::npos);
  EXPECT_NE(message_of([&] { load_hf_weights(dir_ / "model.safetensors.index.json", m, L); })
                .find("a sharded checkpoint's index: give the folder that holds it"),
            std::string::npos);
}

// Damaged files: each refused at open, naming the file and what is wrong.
TEST_F(HfCheckpoint, DamagedSafetensorsFilesAreRefused) {
  const fs::path f = dir_ / "bad.safetensors";
  const auto refused = [&](const std::string& bytes, const std::string& want) {
    std::ofstream(f, std::ios::binary | std::ios::trunc) << bytes;
    const std::string msg = message_of([&] { SafetensorsFile s(f); });
    EXPECT_NE(msg.find(want), std::string::npos) << msg;
    EXPECT_NE(msg.find(f.string()), std::string::npos) << msg;
  };
  const auto with_header = [](const std::string& text, const std::string& data = "") {
    std::string head(8, '\0');
    for (int i = 0; i < 8; ++i) head[static_cast<size_t>(i)] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
    return head + text + data;
  };
  refused("abc", "shorter than a safetensors header");
  refused(std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + "{}", "not a safetensors file");
  refused(with_header("[1, 2]"), "not a JSON object");
  refused(with_header(R"({"a": {"dtype": "Q4", "shape": [1], "data_offsets": [0, 1]}})"), "unknown dtype 'Q4'");
  refused(with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}})", "xxxx"),
          "data_offsets [0, 4] hold 4 bytes, its F32 x 2 needs 8");
  refused(with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", "xxxx"), "the file is cut short");
  refused(with_header(R"({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})"), "not a whole number >= 0");
  refused(with_header(R"({"a": {"dtype": "F32", "shape": [1099511627776, 4096], "data_offsets": [0, 8]}})"), "more than 2^40");
  refused(with_header(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "x": 1}})", "xxxx"), "unknown field 'x'");
  refused(with_header(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}})", "xxxx"), "hold 0 bytes");
  refused(with_header(R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967360], "data_offsets": [0, 8]}})"), "more than 2^40");
  // The tensors' bytes follow one another, from the first after the header to the last of the file.
  refused(with_header(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "b": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", "xxxx"),
          "where the one before it ends at 4");
  refused(with_header(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", "xxxxxxxx"), "4 bytes before it belong to no tensor");
  refused(with_header(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", "xxxxyy"), "2 bytes after the last tensor");
  // A whole file is fine, __metadata__ allowed.
  std::ofstream(f, std::ios::binary | std::ios::trunc)
      << with_header(R"({"__metadata__": {"format": "pt"}, "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", "xxxx");
  EXPECT_NO_THROW(SafetensorsFile s(f));
  // A folder, or a file that is not there, is no safetensors file: what the user gave (exit 2).
  EXPECT_NE(message_of([&] { SafetensorsFile s(dir_); }).find("usage: " + dir_.string() + ": not a regular file"), std::string::npos);
  EXPECT_NE(message_of([&] { SafetensorsFile s(dir_ / "none"); }).find("cannot open: No such file"), std::string::npos);
}

TEST_F(HfCheckpoint, TokenIdsAreReadByRowAndCheckedAgainstTheVocabulary) {
  const fs::path f = dir_ / "ids.safetensors";
  Tensor ids{{3, 4}, {}, "I64", ""};
  for (int64_t v = 0; v < 12; ++v) {
    for (int b = 0; b < 8; ++b) ids.raw += static_cast<char>(b == 0 ? v : 0);
  }
  write_safetensors(f, {{"input_ids", ids}, {"attention_mask", ids}});
  EXPECT_EQ(load_token_ids(f, 1, 2, 4, 20), (std::vector<int32_t>{4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_NE(message_of([&] { load_token_ids(f, 0, 3, 4, 10); }).find("token id 10 at position 10 is outside the vocabulary of 10"),
            std::string::npos);
  EXPECT_NE(message_of([&] { load_token_ids(f, 0, 4, 4, 20); }).find("this step needs 4 sequences of 4 tokens"), std::string::npos);
  EXPECT_NE(message_of([&] { load_token_ids(f, 0, 1, 8, 20); }).find("this step needs 1 sequence of 8 tokens"), std::string::npos);
  // One tensor of any name, [seqlen], I32 (negative ids refused).
  Tensor one{{4}, {}, "I32", std::string("\x01\0\0\0\x02\0\0\0\x03\0\0\0\xff\xff\xff\xff", 16)};
  write_safetensors(f, {{"ids", one}});
  EXPECT_NE(message_of([&] { load_token_ids(f, 0, 1, 4, 20); }).find("token id -1 at position 3"), std::string::npos);
  write_safetensors(f, {{"a", one}, {"b", one}});
  EXPECT_NE(message_of([&] { load_token_ids(f, 0, 1, 4, 20); }).find("2 tensors and none named input_ids"), std::string::npos);
  write_safetensors(f, {{"input_ids", numbered({4}, 1)}});
  EXPECT_NE(message_of([&] { load_token_ids(f, 0, 1, 4, 20); }).find("is F32: token ids are read from I32 or I64"),
            std::string::npos);
}

}  // namespace
}  // namespace ub
