// A run's workload identity; see workload.hpp.
#include "analysis/history/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <optional>
#include <vector>

#include "records/readers/decomposition_log.hpp"

namespace ub {

namespace {

// The parts of a training step's identity, written the same way for our records and benchmark.py's.
struct TrainingIdentity {
  std::string model = "model unknown";
  std::optional<int64_t> layers, config_layers;
  int64_t world = 1, zero = 0, batch = 1;
  bool checkpointing = false, offload = false;
  std::string precision = "bf16";
  // Our step's arithmetic and memory levers, where a run says them (a benchmark.py log does not):
  // fp32 master weights or pure bf16, offloaded checkpoints, MLP tiles, loss chunks.
  std::optional<bool> master_weights;
  std::string recipe;  // our records' whole precision recipe (weights, gradients, AdamW state), where said
  bool offload_checkpoints = false;
  int64_t mlp_tile = 0, loss_chunk = 0;
};

std::string text_of(const TrainingIdentity& t) {
  std::vector<std::string> parts{t.model};
  if (t.layers && t.config_layers && *t.layers != *t.config_layers) {
    parts.push_back(fmt::format("{} of {} layers", *t.layers, *t.config_layers));
  } else if (t.layers) {
    parts.push_back(fmt::format("{} layers", *t.layers));
  } else {
    parts.push_back("all layers");
  }
  parts.push_back(fmt::format("{} GPU{}", t.world, t.world == 1 ? "" : "s"));
  parts.push_back(fmt::format("ZeRO-{}", t.zero));
  if (t.checkpointing) parts.push_back("checkpointing");
  if (t.offload) parts.push_back("offloaded optimizer");
  if (t.offload_checkpoints) parts.push_back("offloaded checkpoints");
  if (t.mlp_tile > 0) parts.push_back(fmt::format("MLP tiles of {}", t.mlp_tile));
  if (t.loss_chunk > 0) parts.push_back(fmt::format("loss chunks of {}", t.loss_chunk));
  parts.push_back(t.precision);
  if (t.master_weights) parts.push_back(*t.master_weights ? "fp32 master weights" : "no fp32 master weights");
  // The gradients' and the optimizer state's dtypes change the step as the weights' do.
  if (!t.recipe.empty()) parts.push_back("(" + t.recipe + ")");
  parts.push_back(fmt::format("batch {}", t.batch));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::optional<int64_t> integer(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return std::nullopt;
  return j[key].get<int64_t>();
}

bool flag(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_boolean() && j[key].get<bool>();
}

std::string text(const nlohmann::json& j, const char* key, const std::string& otherwise) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : otherwise;
}

// An attention problem, ours and bench_flash_attn.py's alike: "32 heads (8 KV) of 128, batch 1,
// causal, window 4096, bf16".
std::string attention_text(int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t batch, bool causal,
                           std::optional<int64_t> window, const std::string& documents, const std::string& dtype) {
  std::string mask = causal ? "causal" : "full mask";
  if (window && *window > 0) mask += fmt::format(", window {}", *window);
  return fmt::format("{} heads ({} KV) of {}, batch {}, {}{}, {}", heads, kv_heads, head_dim, batch, mask, documents, dtype);
}

std::string collective_text(int64_t world_size, bool graph) {
  return fmt::format("{} GPUs{}", world_size, graph ? ", calls replayed from a CUDA graph" : "");
}

// A header's value as written ("" where absent), and as a whole number where it is one.
std::string said(const std::map<std::string, std::string>& header, const char* key) {
  const auto it = header.find(key);
  return it == header.end() ? "" : it->second;
}

std::optional<int64_t> whole(const std::map<std::string, std::string>& header, const char* key) {
  const std::string v = said(header, key);
  if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoll(v);
}

int64_t world_size_of(const nlohmann::json& config, const nlohmann::json& world) {
  if (const auto n = integer(world, "size")) return *n;
  return integer(config, "world_size").value_or(1);
}

}  // namespace

Workload workload_of_records(const std::string& command, const nlohmann::json& config, const nlohmann::json& world) {
  Workload w;
  w.world_size = world_size_of(config, world);
  // A training step (train, sweep, decompose): its config names the model; records of older builds
  // (and hand-written ones) leave the widths out and use older names of the levers.
  const bool training = command == "train" || command == "sweep" || command == "decompose" || config.contains("hidden");
  const bool traced = command == "decompose" && config.is_object() && config.contains("inputs") &&
                      config["inputs"].is_array() && !config["inputs"].empty();
  if (traced) {
    // Another program's step, read from its trace: what --model, --layers, --seqlen and --batch
    // said of it, no more (its precision, sharding and ranks are the trace's, counted with its records).
    const std::string model = text(config, "model", "unknown");
    const auto said = [&](const char* key) {
      if (const auto n = integer(config, key); n && *n > 0) return std::to_string(*n);
      return text(config, key, "unknown");
    };
    const std::string layers = integer(config, "layers").value_or(0) > 0 ? said("layers")
                               : model == "unknown"                       ? "unknown"
                                                                          : "all";
    w.text = fmt::format("a traced step: model {}, layers {}, seqlen {}, batch {}", model, layers, said("seqlen"),
                         said("batch"));
  } else if (config.is_object() && config.contains("model") && training) {
    TrainingIdentity t;
    t.model = text(config, "model", t.model);
    t.layers = integer(config, "layers");
    t.config_layers = integer(config, "config_layers");
    t.world = w.world_size;
    t.zero = integer(config, "zero_stage").value_or(integer(config, "zero").value_or(0));
    t.batch = integer(config, "batch").value_or(1);
    t.checkpointing = flag(config, "activation_checkpointing") || flag(config, "checkpointing");
    t.offload = flag(config, "offload_optimizer");
    t.precision = text(config, "dtype", t.precision);
    if (config.contains("master_weights") && config["master_weights"].is_boolean()) t.master_weights = config["master_weights"].get<bool>();
    t.recipe = text(config, "precision", "");
    t.offload_checkpoints = flag(config, "offload_checkpoints");
    t.mlp_tile = integer(config, "mlp_tile").value_or(0);
    t.loss_chunk = integer(config, "loss_chunk").value_or(0);
    w.text = text_of(t);
  } else if (command == "attention") {
    // What the kernel computes: the mask (causal, a window), and whether each sequence is one
    // document or packed ones (each attends within itself: far less work than one of the length).
    std::string documents;
    if (const auto doc_len = integer(config, "doc_len"); doc_len && *doc_len > 0) {
      documents = fmt::format(", packed documents of {}", *doc_len);
    } else if (config.is_object() && config.contains("docs") && config["docs"].is_array() && !config["docs"].empty()) {
      documents = fmt::format(", packed documents {}", config["docs"].dump());
    }
    w.text = attention_text(integer(config, "heads").value_or(0), integer(config, "kv_heads").value_or(0),
                            integer(config, "head_dim").value_or(0), integer(config, "batch").value_or(1),
                            flag(config, "causal"), integer(config, "window"), documents, text(config, "dtype", "bf16"));
  } else if (command == "nccl") {
    w.text = collective_text(w.world_size, flag(config, "graph"));
  } else if (command == "mamf" && config.is_object() && config.contains("shapes_of") && config["shapes_of"].is_string()) {
    w.text = fmt::format("the products of {}'s step", config["shapes_of"].get<std::string>());
  }
  if (command == "bandwidth" && config.is_object() && config.contains("kernel") && config["kernel"].is_string()) {
    w.text = fmt::format("kernel {}", config["kernel"].get<std::string>());  // the driver's memcpy is not a tiled copy
  }
  return w;  // a mamf run's shapes are read with its figures
}

Workload workload_of_peer_attention(const std::map<std::string, std::string>& header) {
  const int64_t heads = whole(header, "nheads").value_or(0);
  const std::string causal = said(header, "causal");
  const std::string dtype = said(header, "dtype");
  std::string text = attention_text(heads, whole(header, "nheads_kv").value_or(heads), whole(header, "head_dim").value_or(0),
                                    whole(header, "batch").value_or(1), causal == "True" || causal == "true",
                                    whole(header, "window"), "", dtype.empty() ? "bf16" : dtype);
  // Another program's kernel: its backend is part of what was timed (fa3 and sdpa on one GPU differ).
  const std::string backend = said(header, "backend");
  return {fmt::format("{}, bench_flash_attn.py{}", text, backend.empty() ? "" : " backend " + backend), 1};
}

Workload workload_of_peer_nccl(int64_t world_size) {
  const int64_t world = std::max<int64_t>(world_size, 1);
  return {collective_text(world, false) + ", torch.distributed", world};
}

// What a printout leaves out is bench_decompose.py's default (no sharding, recompute, offload or
// Liger, one sequence, one GPU), and bs= is batch=: printouts of one step that say it differently
// are one workload, as compare takes them.
Workload workload_of_printout(const std::map<std::string, std::string>& header) {
  std::vector<std::string> levers;
  if (const std::string backend = said(header, "backend"); !backend.empty()) levers.push_back("backend=" + backend);
  for (const char* key : {"zero", "gc", "offload", "liger"}) {
    const std::string v = said(header, key);
    levers.push_back(fmt::format("{}={}", key, v.empty() ? "0" : v));
  }
  const std::string bs = said(header, "bs"), batch = bs.empty() ? said(header, "batch") : bs;
  levers.push_back(fmt::format("batch={}", batch.empty() ? "1" : batch));
  const std::string ranks = said(header, "world_size");
  levers.push_back(fmt::format("world_size={}", ranks.empty() ? "1" : ranks));
  const int64_t world = std::max<int64_t>(whole(header, "world_size").value_or(1), 1);
  return {fmt::format("a bench_decompose.py step of {}: {}", kPrintoutModel, fmt::join(levers, ", ")), world};
}

std::string mamf_shape_set(const std::vector<MamfShape>& shapes) {
  if (shapes.empty()) return "";
  std::set<int64_t> ms, ns, ks;
  std::set<std::string> distinct;  // a run on several GPUs measures each shape on each
  for (const MamfShape& s : shapes) ms.insert(s.m), ns.insert(s.n), ks.insert(s.k), distinct.insert(s.shape());
  const auto range = [](const std::set<int64_t>& v) {
    return v.size() == 1 ? fmt::format("{}", *v.begin()) : fmt::format("{}-{} ({})", *v.begin(), *v.rbegin(), v.size());
  };
  return fmt::format("m {}, n {}, k {}: {} shapes", range(ms), range(ns), range(ks), distinct.size());
}

Workload workload_of_sweep_log(const RunLog& log) {
  const auto number = [&](const char* key) -> std::optional<int64_t> {
    const auto it = log.config.find(key);
    if (it == log.config.end()) return std::nullopt;
    try {
      return std::stoll(it->second);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  };
  TrainingIdentity t;
  if (log.model) t.model = *log.model;
  t.layers = log.layers;
  const RunSharding sharding = sharding_of(log);
  t.world = sharding.world_size;
  t.zero = sharding.zero_stage;
  t.batch = log.batch;
  t.checkpointing = number("gc").value_or(0) != 0;
  t.offload = sharding.offload_optimizer;
  t.precision = log.dtype;
  return {text_of(t), t.world};
}

}  // namespace ub
