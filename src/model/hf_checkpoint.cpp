// Hugging Face weights and token ids into the engine's layout; see hf_checkpoint.hpp.
#include "model/hf_checkpoint.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "base/error.hpp"
#include "base/text.hpp"
#include "base/json_text.hpp"
#include "model/safetensors.hpp"

namespace ub {

namespace {

namespace fs = std::filesystem;

// One tensor of the checkpoint with the shape the model needs of it; a parameter of the layout is
// one piece or several concatenated row-wise (q, k, v into qkv_proj; gate, up into gate_up_proj).
struct Piece {
  std::string name;
  std::vector<int64_t> shape;
};
using Source = std::vector<Piece>;

std::string shape_text(const std::vector<int64_t>& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

// Every tensor of a checkpoint's files by name.
class Checkpoint {
 public:
  explicit Checkpoint(const fs::path& path) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      if (path.filename() == "model.safetensors.index.json") {
        throw UsageError(fmt::format("{}: a sharded checkpoint's index: give the folder that holds it and its shards",
                                     path.string()));
      }
      open(path);
      return;
    }
    // Named there, whatever it is (a link to nothing, a loop): opening it says what is wrong.
    const auto there = [&](const fs::path& p) { return fs::symlink_status(p, ec).type() != fs::file_type::not_found; };
    const fs::path index = path / "model.safetensors.index.json", whole = path / "model.safetensors";
    if (there(index) && there(whole)) {
      throw UsageError(fmt::format("{}: holds both model.safetensors and model.safetensors.index.json: which checkpoint "
                                   "is meant is not known; give the file itself", path.string()));
    }
    if (there(index)) {
      read_index(path, index);
    } else if (there(whole)) {
      open(whole);
    } else {
      throw UsageError(fmt::format("{}: no model.safetensors or model.safetensors.index.json in this folder "
                                   "(what save_pretrained writes)", path.string()));
    }
  }

  struct Found {
    const SafetensorsFile* file;
    const SafetensorsEntry* entry;
  };
  const Found* find(const std::string& name) const {
    const auto it = names_.find(name);
    return it == names_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, Found>& names() const { return names_; }

 private:
  const SafetensorsFile& open(const fs::path& file) {
    files_.push_back(std::make_unique<SafetensorsFile>(file));
    const SafetensorsFile& f = *files_.back();
    for (const auto& [name, entry] : f.tensors()) {
      const auto [it, fresh] = names_.emplace(name, Found{&f, &entry});
      if (!fresh) {
        throw WorkError(fmt::format("{}: tensor {} is also in {}: which one is meant is not known", file.string(),
                                    name_in_quotes(name), it->second.file->path().string()));
      }
    }
    return f;
  }

  // A sharded checkpoint: the index's weight_map names the file of each tensor, files in the
  // checkpoint's own folder.
  void read_index(const fs::path& folder, const fs::path& index) {
    const nlohmann::json doc = parse_json_text(read_json_file(index, "a checkpoint index"), index.string());
    const auto map = doc.is_object() ? doc.find("weight_map") : doc.end();
    if (map == doc.end() || !map->is_object()) throw WorkError(fmt::format("{}: no weight_map object", index.string()));
    std::map<std::string, const SafetensorsFile*> opened;
    for (const auto& [name, v] : map->items()) {
      if (!v.is_string()) throw WorkError(fmt::format("{}: weight_map {} is not a file name", index.string(), name_in_quotes(name)));
      const std::string file = v.get<std::string>();
      if (file.empty() || file.find('/') != std::string::npos || file[0] == '.') {
        throw WorkError(fmt::format("{}: weight_map {} names {}: shards are files of the index's own folder",
                                    index.string(), name_in_quotes(name), name_in_quotes(file)));
      }
      if (!opened.count(file)) opened[file] = &open(folder / file);
      const Found* f = find(name);
      if (!f || f->file != opened[file]) {
        throw WorkError(fmt::format("{}: weight_map puts {} in {}, which does not hold it", index.string(), name_in_quotes(name), file));
      }
    }
  }

  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, Found> names_;
};

Source one(std::string name, std::vector<int64_t> shape) { return {{std::move(name), std::move(shape)}}; }

// Where each parameter of the layout comes from: alternatives, the first whose first piece the
// checkpoint has is read.
std::map<size_t, std::vector<Source>> sources(const ModelShape& m, const LlamaLayout& L, const std::string& P) {
  const int64_t H = m.hidden, V = m.vocab, d = m.head_dim, q = m.heads * d, kv = m.kv_heads * d;
  std::map<size_t, std::vector<Source>> plan;
  plan[L.embed] = {one(P + "embed_tokens.weight", {V, H})};
  for (size_t i = 0; i < L.layers.size(); ++i) {
    const LayerParams& lp = L.layers[i];
    const std::string p = P + fmt::format("layers.{}.", i);
    plan[lp.attn_norm] = {one(p + "input_layernorm.weight", {H})};
    plan[lp.qkv] = {{{p + "self_attn.q_proj.weight", {q, H}}, {p + "self_attn.k_proj.weight", {kv, H}},
                     {p + "self_attn.v_proj.weight", {kv, H}}}};
    if (lp.q_norm != kNoTensor) plan[lp.q_norm] = {one(p + "self_attn.q_norm.weight", {d})};
    if (lp.k_norm != kNoTensor) plan[lp.k_norm] = {one(p + "self_attn.k_norm.weight", {d})};
    plan[lp.o] = {one(p + "self_attn.o_proj.weight", {H, q})};
    plan[lp.mlp_norm] = {one(p + "post_attention_layernorm.weight", {H})};
    if (!lp.moe()) {
      const int64_t I = m.intermediate;
      plan[lp.gate_up] = {{{p + "mlp.gate_proj.weight", {I, H}}, {p + "mlp.up_proj.weight", {I, H}}}};
      plan[lp.down] = {one(p + "mlp.down_proj.weight", {H, I})};
      continue;
    }
    const MoeShape& e = *m.moe;
    const int64_t E = e.experts, I = e.intermediate;
    plan[lp.router] = {one(p + "mlp.gate.weight", {E, H}), one(p + "block_sparse_moe.gate.weight", {E, H})};
    Source qwen_gate_up, mixtral_gate_up, qwen_down, mixtral_down;  // one expert at a time
    for (int64_t x = 0; x < E; ++x) {
      const std::string qe = p + fmt::format("mlp.experts.{}.", x), me = p + fmt::format("block_sparse_moe.experts.{}.", x);
      qwen_gate_up.push_back({qe + "gate_proj.weight", {I, H}});
      qwen_gate_up.push_back({qe + "up_proj.weight", {I, H}});
      mixtral_gate_up.push_back({me + "w1.weight", {I, H}});
      mixtral_gate_up.push_back({me + "w3.weight", {I, H}});
      qwen_down.push_back({qe + "down_proj.weight", {H, I}});
      mixtral_down.push_back({me + "w2.weight", {H, I}});
    }
    plan[lp.gate_up] = {one(p + "mlp.experts.gate_up_proj", {E, 2 * I, H}), qwen_gate_up, mixtral_gate_up,
                        one(p + "block_sparse_moe.experts.gate_up_proj", {E, 2 * I, H})};
    plan[lp.down] = {one(p + "mlp.experts.down_proj", {E, H, I}), qwen_down, mixtral_down,
                     one(p + "block_sparse_moe.experts.down_proj", {E, H, I})};
    const int64_t Is = e.shared_experts * e.shared_intermediate;
    if (lp.shared_gate_up != kNoTensor) {
      for (const char* s : {"mlp.shared_expert.", "mlp.shared_experts."}) {  // Qwen2-MoE's, DeepSeek's
        plan[lp.shared_gate_up].push_back({{p + s + "gate_proj.weight", {Is, H}}, {p + s + "up_proj.weight", {Is, H}}});
        plan[lp.shared_down].push_back(one(p + s + "down_proj.weight", {H, Is}));
      }
    }
    if (lp.shared_expert_gate != kNoTensor) plan[lp.shared_expert_gate] = {one(p + "mlp.shared_expert_gate.weight", {1, H})};
  }
  plan[L.final_norm] = {one(P + "norm.weight", {H})};
  if (L.lm_head != L.embed) plan[L.lm_head] = {one("lm_head.weight", {V, H})};
  return plan;
}

// The layer a tensor name belongs to ("<P>layers.<n>."), or -1.
int64_t layer_of(const std::string& name, const std::string& P) {
  const std::string head = P + "layers.";
  if (name.compare(0, head.size(), head) != 0) return -1;
  size_t at = head.size();
  int64_t n = 0;
  const size_t digits = at;
  while (at < name.size() && at - digits < 9 && name[at] >= '0' && name[at] <= '9') n = n * 10 + (name[at++] - '0');
  return at > digits && at < name.size() && name[at] == '.' ? n : -1;
}

// The model in a message: its preset id or config path, when it has one.
std::string model_label(const ModelShape& m) { return m.id.empty() ? "the model" : m.id; }

// What may follow "<P>layers.<n>." in a layer of this model, dense or a mixture of experts (a
// layer past --layers may be either): every name the model's layers read, in every naming.
std::set<std::string> layer_tensor_names(const ModelShape& m, const std::string& P) {
  std::set<std::string> out;
  for (const bool moe : {false, true}) {
    if (moe && !m.moe) continue;
    ModelShape one = m;
    one.layers = 1;
    one.moe_layers.assign(1, moe);
    one.windows.clear();  // the names are the same whatever the window
    const std::string head = P + "layers.0.";
    for (const auto& [t, alternatives] : sources(one, llama_layout(one), P)) {
      for (const Source& s : alternatives) {
        for (const Piece& piece : s) {
          if (piece.name.compare(0, head.size(), head) == 0) out.insert(piece.name.substr(head.size()));
        }
      }
    }
  }
  out.insert("self_attn.rotary_emb.inv_freq");
  return out;
}

}  // namespace

LoadedWeights load_hf_weights(const fs::path& path, const ModelShape& m, const LlamaLayout& layout, WeightsRead read) {
  const Checkpoint ck(path);
  const std::string where = path.string();
  const std::string P = ck.find("model.embed_tokens.weight") ? "model." : "";
  LoadedWeights out;
  if (read == WeightsRead::values) out.flat.assign(layout.total, 0.0f);
  out.file_tensors = static_cast<int64_t>(ck.names().size());
  std::set<std::string> used;
  for (const auto& [t, alternatives] : sources(m, layout, P)) {
    const Source* chosen = nullptr;
    for (const Source& s : alternatives) {
      if (ck.find(s.front().name)) {
        chosen = &s;
        break;
      }
    }
    if (!chosen) {
      throw WorkError(fmt::format("{}: no tensor {} for {} of {} ({} layers): weights of another model?", where,
                                  name_in_quotes(alternatives.front().front().name), layout[t].name, model_label(m), m.layers));
    }
    size_t filled = 0;
    for (const Piece& piece : *chosen) {
      const Checkpoint::Found* f = ck.find(piece.name);
      if (!f) throw WorkError(fmt::format("{}: no tensor {} beside {}", where, name_in_quotes(piece.name), name_in_quotes(chosen->front().name)));
      if (f->entry->shape != piece.shape) {
        throw WorkError(fmt::format("{}: tensor {} is {}, {} needs {}", f->file->path().string(), name_in_quotes(piece.name),
                                    shape_text(f->entry->shape), model_label(m), shape_text(piece.shape)));
      }
      if (f->entry->dtype != "F32" && f->entry->dtype != "F16" && f->entry->dtype != "BF16") {
        throw WorkError(fmt::format("{}: tensor {} is {}: weights are read from F32, F16 or BF16",
                                    f->file->path().string(), name_in_quotes(piece.name), f->entry->dtype));
      }
      if (read == WeightsRead::values) {
        float* at = out.flat.data() + layout[t].offset + filled;
        f->file->read_floats(*f->entry, at);
        const auto bad = std::find_if(at, at + f->entry->elements(), [](float v) { return !std::isfinite(v); });
        if (bad != at + f->entry->elements()) {
          throw WorkError(fmt::format("{}: tensor {} holds {} at element {}: weights that are not finite train nothing",
                                      f->file->path().string(), name_in_quotes(piece.name), *bad, bad - at));
        }
      }
      filled += static_cast<size_t>(f->entry->elements());
      used.insert(piece.name);
    }
    if (filled != layout[t].count()) {
      throw WorkError(fmt::format("{}: the pieces of {} do not fill it", where, layout[t].name));  // a layout out of step with this map
    }
  }
  // The layers past --layers: read by no step, but still the model's layers (up to its depth in
  // the config, with names its layers have), or the file is another model's.
  std::set<int64_t> skipped;
  std::optional<std::set<std::string>> layer_names;
  const int64_t depth = std::max(m.config_layers, m.layers);
  for (const auto& [name, f] : ck.names()) {
    if (used.count(name) || name.ends_with("rotary_emb.inv_freq")) continue;
    if (name == "lm_head.weight" && layout.lm_head == layout.embed) continue;  // tied: the embedding serves
    if (const int64_t l = layer_of(name, P); l >= m.layers && l < depth) {
      if (!layer_names) layer_names = layer_tensor_names(m, P);
      const std::string rest = name.substr(name.find('.', P.size() + 7) + 1);
      if (layer_names->count(rest)) {
        skipped.insert(l);
        continue;
      }
    } else if (l >= depth) {
      throw WorkError(fmt::format("{}: tensor {} is of layer {}, past the {} layers of {}: weights of another model?",
                                  f.file->path().string(), name_in_quotes(name), l, depth, model_label(m)));
    }
    throw WorkError(fmt::format("{}: tensor {} is not a parameter of {} ({} layers, as the engine trains it): "
                                "weights of another model?", f.file->path().string(), name_in_quotes(name), model_label(m), m.layers));
  }
  out.skipped_layers = static_cast<int64_t>(skipped.size());
  return out;
}

std::vector<int32_t> load_token_ids(const fs::path& path, int64_t first_row, int64_t rows, int64_t seqlen, int64_t vocab) {
  const SafetensorsFile f(path);
  const std::string where = path.string();
  const SafetensorsEntry* t = f.find("input_ids");
  if (!t && f.tensors().size() == 1) t = &f.tensors().begin()->second;
  if (!t) throw WorkError(fmt::format("{}: {} tensors and none named input_ids: which holds the token ids?", where, f.tensors().size()));
  const std::vector<int64_t>& s = t->shape;
  if (s.empty() || s.size() > 2) {
    throw WorkError(fmt::format("{}: tensor {} is {}: token ids are [sequences, seqlen] or [seqlen]", where, name_in_quotes(t->name),
                                shape_text(s)));
  }
  const int64_t file_rows = s.size() == 2 ? s[0] : 1, file_seqlen = s.back();
  if (file_seqlen != seqlen || file_rows < first_row + rows) {
    throw WorkError(fmt::format("{}: tensor {} is {}: this step needs {} sequence{} of {} tokens{}", where, name_in_quotes(t->name),
                                shape_text(s), first_row + rows, first_row + rows == 1 ? "" : "s", seqlen,
                                first_row > 0 ? " (the sequences of every rank)" : ""));
  }
  const std::vector<int64_t> all = f.read_ints(*t);
  std::vector<int32_t> ids(static_cast<size_t>(rows * seqlen));
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t v = all[static_cast<size_t>(first_row * seqlen) + i];
    if (v < 0 || v >= vocab) {
      throw WorkError(fmt::format("{}: token id {} at position {} is outside the vocabulary of {}", where, v,
                                  static_cast<int64_t>(i) + first_row * seqlen, vocab));
    }
    ids[i] = static_cast<int32_t>(v);
  }
  return ids;
}

}  // namespace ub
