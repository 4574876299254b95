// `upgradebench flops`: model FLOPs per training step by the MFU convention (facts/flops.hpp),
// with the attention share that decides how much a GPU's attention advantage can matter; of an
// MoE model its total and active parameters, of a model with sliding windows each layer's window.
#include <fmt/format.h>

#include <map>

#include "base/error.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "base/units.hpp"
#include "cli/output.hpp"
#include "facts/flops.hpp"
#include "records/train_records.hpp"
#include "report/format.hpp"

namespace ub::cli {

namespace {

using nlohmann::json;
using report::Align;

struct FlopsOptions {
  std::string model = "llama-3.1-8b";
  std::string seqlens = "4096,8192,16384,32768,65536,131072,262144";
  int64_t layers = 0;
  std::string batch = "1";
  std::string doc_len, docs;
  bool seqlens_given = false;  // --seqlens on the command line (else --docs sets it)
  bool non_causal = false;
  bool hfu = false;
  OutputOptions out;
};

// "30.53B parameters, 3.35B active per token: top 8 of 128 experts in 48 of 48 layers, ..."
std::string moe_note(const ModelShape& m) {
  const MoeShape& e = *m.moe;
  int64_t moe_layers = 0;
  for (int64_t i = 0; i < m.layers; ++i) moe_layers += m.is_moe_layer(i) ? 1 : 0;
  return fmt::format("Mixture of experts: {:.2f}B parameters, {:.2f}B active per token (top {} of {} experts "
                     "{} wide in {} of {} layers{}, the router; embedding and lm_head both counted); the dense FLOPs "
                     "count the active ones (MoE MFU as torchtitan and Megatron report it).",
                     static_cast<double>(m.parameter_count()) / 1e9, static_cast<double>(m.active_parameter_count()) / 1e9,
                     e.top_k, e.experts, e.intermediate, moe_layers, m.layers,
                     e.shared_experts ? fmt::format(", {} shared {} wide", e.shared_experts, e.shared_intermediate) : "");
}

// "Attention windows: 52 of 62 layers a window of 1024 tokens, full: layers 5, 11, ...; ..."
std::string window_note(const ModelShape& m) {
  std::map<int64_t, int64_t> layers_per_window;
  std::vector<std::string> full;
  for (int64_t i = 0; i < m.layers; ++i) {
    if (m.window(i) > 0) ++layers_per_window[m.window(i)];
    else full.push_back(fmt::format("{}", i));
  }
  std::vector<std::string> parts;
  for (const auto& [w, n] : layers_per_window) parts.push_back(fmt::format("{} of {} layers a window of {} tokens", n, m.layers, w));
  if (!full.empty()) parts.push_back(fmt::format("full attention in layer{} {}", full.size() > 1 ? "s" : "", fmt::join(full, ", ")));
  return fmt::format("Attention windows: {}; a windowed layer's attention counts 2*s*w - w^2 for s^2 when w < s "
                     "(s*w - w^2/2 key positions).", fmt::join(parts, "; "));
}

void run(Context& ctx, const FlopsOptions& o) {
  const ModelShape m = ctx.model(o.model, o.layers);
  FlopOptions fo;
  fo.batch = parse_size(o.batch, "--batch");
  if (fo.batch > kMaxBatch) throw UsageError(fmt::format("--batch {}: at most {} sequences a step", o.batch, kMaxBatch));
  fo.causal = !o.non_causal;
  if (!o.doc_len.empty()) fo.doc_len = parse_size(o.doc_len, "--doc-len");
  if (!o.docs.empty()) fo.docs = parse_size_list(o.docs, "--docs");
  const std::vector<int64_t> seqlens = seqlens_or_documents(o.seqlens, o.seqlens_given, fo.docs, "--seqlen");
  refuse_repeated(seqlens, "--seqlen");
  for (const int64_t s : seqlens) {
    if (fo.doc_len && *fo.doc_len > s) {
      throw UsageError(fmt::format("--doc-len {}: longer than the sequence of {} tokens it is packed into", *fo.doc_len, s));
    }
  }

  report::Document doc;
  auto& b = doc.add(fmt::format("{}: {} layers, hidden {}, {} heads ({} kv, head_dim {}), vocab {}",
                                m.id, m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.vocab));
  b.table.columns = {{"seqlen"}, {"dense TFLOP"}, {"attention TFLOP"}, {"total TFLOP"},
                     {"attention share"}};
  if (o.hfu) b.table.columns.push_back({"HFU TFLOP"});
  json points = json::array();
  for (int64_t s : seqlens) {
    const StepFlops f = step_flops(m, s, fo);
    std::vector<std::string> row = {fmt::format("{}", s), report::num(to_tflop(f.dense)),
                                    report::num(to_tflop(f.attention)), report::num(to_tflop(f.total())),
                                    report::percent(f.attention_share())};
    json p = {{"seqlen", s},
              {"dense_tflop", to_tflop(f.dense)},
              {"attention_tflop", to_tflop(f.attention)},
              {"total_tflop", to_tflop(f.total())},
              {"attention_share", f.attention_share()}};
    if (o.hfu) {
      FlopOptions with_recompute = fo;
      with_recompute.recompute = true;
      const double hfu = step_flops(m, s, with_recompute).total();
      row.push_back(report::num(to_tflop(hfu)));
      p["hfu_tflop"] = to_tflop(hfu);
    }
    b.table.add_row(std::move(row));
    points.push_back(std::move(p));
  }
  b.notes.push_back(fmt::format(
      "Per step, batch {}, {} attention{}. Model FLOPs (MFU convention): dense 6*N*tokens with "
      "N = {:.3f}B matmul parameters (lm_head once), attention {}*s^2*head_dim*heads*layers.",
      fo.batch, fo.causal ? "causal" : "non-causal",
      !fo.docs.empty() ? fmt::format(", {} documents packed (attention over sum of len^2)", fo.docs.size())
      : fo.doc_len     ? fmt::format(", documents of {} tokens packed (attention over sum of len^2)", *fo.doc_len)
                       : "",
      dense_matmul_params(m) / 1e9, fo.causal ? 6 : 12));
  if (o.hfu) {
    b.notes.push_back("HFU adds the forward pass that activation checkpointing recomputes.");
  }
  if (m.moe) b.notes.push_back(moe_note(m));
  if (m.has_windows()) b.notes.push_back(window_note(m));
  json windows = json::array();
  for (int64_t i = 0; m.has_windows() && i < m.layers; ++i) windows.push_back(m.window(i));
  json j = {{"model", m.id},
            {"layers", m.layers},
            {"batch", fo.batch},
            {"causal", fo.causal},
            {"doc_len", fo.doc_len ? json(*fo.doc_len) : json()},
            {"docs", fo.docs},
            {"dense_params", dense_matmul_params(m)},
            {"parameters", m.parameter_count()},
            {"active_parameters", m.active_parameter_count()},
            {"windows", windows},
            {"points", points}};
  o.out.emit(doc, j);
}

}  // namespace

void register_flops(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<FlopsOptions>();
  auto* cmd = app.add_subcommand("flops", "Model FLOPs per training step, attention share, "
                                          "packed-document variant (the MFU convention)");
  cmd->add_option("--model", o->model, "Preset id or path to a Hugging Face config.json")
      ->capture_default_str();
  auto* seqlens = cmd->add_option("--seqlens,--seqlen", o->seqlens, "Sequence lengths, comma-separated (k = 1024)")
                      ->capture_default_str();
  cmd->add_option("--layers", o->layers, "Keep only the first N layers (0: all)");
  cmd->add_option("--batch", o->batch, "Micro-batch size")->capture_default_str();
  cmd->add_option("--doc-len", o->doc_len, "Pack documents of this many tokens (document mask)");
  cmd->add_option("--docs", o->docs, "Pack documents of these lengths (summing to the sequence length, "
                                     "the default --seqlen)");
  cmd->add_flag("--non-causal", o->non_causal, "Count full (non-causal) attention: 12 not 6");
  cmd->add_flag("--hfu", o->hfu, "Also count activation-checkpoint recompute (HFU)");
  o->out.add_to(*cmd);
  cmd->callback([&ctx, o, seqlens] {
    o->seqlens_given = seqlens->count() > 0;
    run(ctx, *o);
  });
}

}  // namespace ub::cli
