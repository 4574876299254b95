// `upgradebench flops`: model FLOPs per training step by the MFU convention (facts/flops.hpp),
// with the attention share that decides how much a GPU's attention advantage can matter.
#include <fmt/format.h>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "base/units.hpp"
#include "cli/output.hpp"
#include "facts/flops.hpp"
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

void run(Context& ctx, const FlopsOptions& o) {
  const ModelShape m = ctx.model(o.model, o.layers);
  FlopOptions fo;
  fo.batch = parse_size(o.batch, "--batch");
  fo.causal = !o.non_causal;
  if (!o.doc_len.empty()) fo.doc_len = parse_size(o.doc_len, "--doc-len");
  if (!o.docs.empty()) fo.docs = parse_size_list(o.docs, "--docs");
  const std::vector<int64_t> seqlens = seqlens_or_documents(o.seqlens, o.seqlens_given, fo.docs, "--seqlen");

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
  json j = {{"model", m.id},
            {"layers", m.layers},
            {"batch", fo.batch},
            {"causal", fo.causal},
            {"doc_len", fo.doc_len ? json(*fo.doc_len) : json()},
            {"docs", fo.docs},
            {"dense_params", dense_matmul_params(m)},
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
  cmd->add_option("--layers", o->layers, "Keep only the first N layers");
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
