// `upgradebench compare OLD NEW`: two logs of one kind side by side: training runs (benchmark.py's
// sweep logs or our records) per sequence length (analysis/compare.hpp), attention micro-benchmarks,
// step decompositions or MAMF runs (analysis/log_comparisons.hpp), collective benchmarks
// (analysis/nccl_comparison.hpp). Each file is read once.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/log_comparisons.hpp"
#include "analysis/nccl_comparison.hpp"
#include "analysis/run_limits.hpp"
#include "base/error.hpp"
#include "base/text.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/compare_options.hpp"
#include "cli/one_card.hpp"
#include "cli/output.hpp"
#include "cli/run_inputs.hpp"
#include "cli/same_measurement.hpp"
#include "records/context_record.hpp"
#include "records/readers/bandwidth_log.hpp"
#include "records/readers/log_kind.hpp"
#include "records/readers/read_run.hpp"
#include "report/comparison_view.hpp"
#include "report/log_comparison_views.hpp"
#include "report/nccl_views.hpp"

namespace ub::cli {

void CompareFlags::add_to(CLI::App& cmd) {
  cmd.add_option("--price-old,--price-from", price_old, "USD per GPU-hour of the old GPU (--price-from: the older name)");
  cmd.add_option("--price-new,--price-to", price_new, "USD per GPU-hour of the new GPU (--price-to: the older name)");
  cmd.add_option("--tokens", tokens, "Also give the time to train this many tokens (e.g. 1e12)");
  cmd.add_option("--train-gpus,--gpus", gpus, "... on this many GPUs (--gpus: the older name)")->capture_default_str();
  cmd.add_option("--power-price", power_price, "USD per kWh of electricity: its cost per token, for GPUs you own");
  cmd.add_option("--pue", pue, "With --power-price: the facility's power over the GPUs' (1.0: the GPU alone)")->capture_default_str();
  cmd.add_flag("--strict", strict, "Refuse runs whose software stacks differ (beyond the intended)");
  cmd.add_flag("--force", force, "Compare runs of different models, depths, batch sizes or dtypes");
}

std::vector<std::string> CompareFlags::given() const {
  std::vector<std::string> out;
  for (const auto& [name, said] : {std::pair{"--price-old", !price_old.empty()}, {"--price-new", !price_new.empty()},
                                   {"--tokens", !tokens.empty()}, {"--train-gpus", gpus != "1"},
                                   {"--power-price", !power_price.empty()}, {"--pue", pue != "1.0"},
                                   {"--strict", strict}, {"--force", force}}) {
    if (said) out.emplace_back(name);
  }
  return out;
}

void CompareFlags::refuse_unused(const std::string& what, bool takes_force) const {
  std::vector<std::string> unused = given();
  if (takes_force) std::erase(unused, "--force");
  if (unused.empty()) return;
  throw UsageError(fmt::format("{}: {} {} for training runs (their cost, time to train and stacks), which {} has none "
                               "of; leave {} out", what, fmt::join(unused, ", "), unused.size() == 1 ? "is" : "are",
                               what, unused.size() == 1 ? "it" : "them"));
}

CompareOptions CompareFlags::parse() const {
  CompareOptions o;
  const Prices prices = parse_prices(price_old, price_new);
  o.price_old = prices.old_gpu, o.price_new = prices.new_gpu;
  o.tokens = parse_optional_positive(tokens, "--tokens", kTokensRange);
  o.gpus = parse_size(gpus, "--train-gpus");
  if (o.gpus > kMaxTrainGpus) {
    throw UsageError(fmt::format("--train-gpus {}: more GPUs than any cluster has (at most {})", gpus, kMaxTrainGpus));
  }
  if (!o.tokens && o.gpus != 1) throw UsageError("--train-gpus is for the time to train --tokens: give --tokens too");
  o.power_usd_per_kwh = parse_optional_positive(power_price, "--power-price", kPowerPriceRange);
  o.pue = parse_positive(pue, "--pue", kPueRange);
  if (!o.power_usd_per_kwh && o.pue != 1) throw UsageError("--pue is for the cost of --power-price: give --power-price too");
  o.strict = strict;
  o.force = force;
  return o;
}

namespace {
struct CompareCliOptions {
  std::string old_path, new_path;
  CompareFlags flags;
  LogInputs inputs;
  OutputOptions out;
};
}  // namespace

void register_compare(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CompareCliOptions>();
  auto* cmd = app.add_subcommand("compare", "Two runs of one kind side by side: training (speedup per "
                                            "sequence length with intervals, MFU, memory, $/token, stack check), "
                                            "attention, decomposition, MAMF, HBM bandwidth, collectives (size by size)");
  cmd->add_option("OLD", o->old_path, "Log of the GPU you have (a file, or run:ID of the history)")->required();
  cmd->add_option("NEW", o->new_path, "Log of the GPU you consider (a file, or run:ID of the history)")->required();
  o->flags.add_to(*cmd);
  o->inputs.add_to(*cmd);
  o->out.add_to(*cmd);
  cmd->callback([&ctx, o] {
    refuse_repeated_inputs({o->old_path, o->new_path}, "compare");
    // Two of a kind: training logs, attention micro-benchmarks, step decompositions, MAMF runs or
    // collective benchmarks.
    const LineSource old_text = o->inputs.read(o->old_path), new_text = o->inputs.read(o->new_path);
    const LogKind kind = detect_log_kind(old_text), new_kind = detect_log_kind(new_text);
    // Our `bandwidth` records are no log of another tool's kind: told by their records.
    const bool old_bw = kind == LogKind::unknown && has_record_type(old_text, "bandwidth");
    const bool new_bw = new_kind == LogKind::unknown && has_record_type(new_text, "bandwidth");
    // One measurement on both sides, told by its figures: after what tells the two apart by
    // workload (another depth, another window), which says more.
    const auto shared = [&] {
      refuse_one_card_two_names(gpu_side(old_text), gpu_side(new_text), "compare");
      refuse_shared_figures({o->old_path, o->new_path}, "compare", [&](const std::string& arg) { return o->inputs.read(arg); });
    };
    // A GPU the catalog does not know: nothing read from its log was held to a peak.
    const auto say_unknown = [&](const auto& old_log, const auto& new_log) {
      for (const auto& [gpu, path] : {std::pair{&old_log.gpu, &o->old_path}, std::pair{&new_log.gpu, &o->new_path}}) {
        if (const auto w = unknown_gpu_warning(*gpu, ctx.catalog(), printable(*path))) cli::warn(*w);
      }
    };
    // The libraries our records name, where the two differ (another cuDNN times other attention
    // kernels): the ratios are then the software's as much as the GPU's, said.
    const auto say_stack = [&] {
      const RecordGpus a = record_gpus(old_text), b = record_gpus(new_text);
      for (const auto& [component, versions] : a.stack) {
        const auto other = b.stack.find(component);
        if (other == b.stack.end() || other->second == versions) continue;
        cli::warn(fmt::format("{} differs: {} (old) vs {} (new): the ratios are the software's as much as the GPU's",
                              component, fmt::join(versions, ", "), fmt::join(other->second, ", ")));
      }
    };
    // Lines a reader skipped (damaged, duplicate) are said on stderr after the result, as memfit does.
    const auto warn = [&](const auto& old_log, const auto& new_log) {
      warn_about_lines(old_log.warnings, o->old_path);
      warn_about_lines(new_log.warnings, o->new_path);
      say_unknown(old_log, new_log);
      say_stack();
    };
    if (old_bw && new_bw) {
      o->flags.refuse_unused("a bandwidth comparison", false);
      const BandwidthLog a = read_bandwidth_log(old_text), b = read_bandwidth_log(new_text);
      const BandwidthComparison c = compare_bandwidth(a, b, ctx.catalog());
      shared();
      o->out.emit(report::bandwidth_comparison_document(c), c);
      warn(a, b);
      return;
    }
    if (kind != new_kind || kind == LogKind::unknown) {
      throw UsageError(fmt::format("compare needs two logs of one kind: {} is {}, {} is {}", o->old_path,
                                   to_string(kind), o->new_path, to_string(new_kind)));
    }
    if (kind == LogKind::prediction) {  // predict's records are no measurement to compare
      throw UsageError(fmt::format("compare takes two measurements: {} and {} are predictions (`upgradebench "
                                   "predict`); `upgradebench report PREDICTIONS MEASURED` draws a prediction beside the "
                                   "run that measured it", o->old_path, o->new_path));
    }
    const Catalog& cat = ctx.catalog();
    if (kind == LogKind::training) {
      const RunLog a = read_run_log(old_text), b = read_run_log(new_text);
      const Comparison c = compare_runs(a, b, cat, ctx.data_dir() / "models", o->flags.parse());
      refuse_no_common_length(c);
      shared();
      o->out.emit(report::comparison_document(c), report::comparison_json(c));
    } else if (kind == LogKind::attention) {
      o->flags.refuse_unused("an attention comparison", false);
      const AttentionLog a = read_attention_log(old_text), b = read_attention_log(new_text);
      const AttentionComparison c = compare_attention(a, b, cat);
      shared();
      o->out.emit(report::attention_comparison_document(c), c);
      warn(a, b);
    } else if (kind == LogKind::decomposition) {
      o->flags.refuse_unused("a decomposition comparison", true);
      const DecompositionLog a = read_decomposition_log(old_text), b = read_decomposition_log(new_text);
      for (const DecompositionLog* l : {&a, &b}) {  // a printout's work is its model's at its length, as predict holds it
        if (l->records.empty()) refuse_printout_not_of_model(*l, ctx.model(kPrintoutModel, 0), "");
      }
      const DecompositionComparison c = compare_decomposition(a, b, cat, o->flags.force);
      shared();
      o->out.emit(report::decomposition_comparison_document(c), c);
      warn(a, b);
    } else if (kind == LogKind::nccl) {
      o->flags.refuse_unused("a collective comparison", false);
      const NcclLog a = read_nccl_log(old_text), b = read_nccl_log(new_text);
      const NcclComparison c = compare_nccl(a, b, cat);
      shared();
      o->out.emit(report::nccl_comparison_document(c), c);
      say_unknown(a, b);
      say_stack();
    } else {
      o->flags.refuse_unused("a MAMF comparison", true);
      const MamfLog a = read_mamf_log(old_text), b = read_mamf_log(new_text);
      const MamfComparison c = compare_mamf(a, b, cat, o->flags.force);
      shared();
      o->out.emit(report::mamf_comparison_document(c), c);
      say_unknown(a, b);
      say_stack();
    }
  });
}

}  // namespace ub::cli
