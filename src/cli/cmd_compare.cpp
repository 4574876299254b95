// `upgradebench compare OLD NEW`: two training runs (the seed's sweep logs or our records) side
// by side, per sequence length; see core/compare.hpp.
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/compare_options.hpp"
#include "cli/output.hpp"
#include "core/readers/read_run.hpp"
#include "report/comparison_view.hpp"

namespace ub::cli {

void CompareFlags::add_to(CLI::App& cmd) {
  cmd.add_option("--price-old", price_old, "USD per GPU-hour of the old GPU");
  cmd.add_option("--price-new", price_new, "USD per GPU-hour of the new GPU");
  cmd.add_option("--tokens", tokens, "Also give the time to train this many tokens (e.g. 1e12)");
  cmd.add_option("--gpus", gpus, "... on this many GPUs")->capture_default_str();
  cmd.add_flag("--strict", strict, "Refuse runs whose software stacks differ (beyond the intended)");
  cmd.add_flag("--force", force, "Compare runs of different models, depths, batch sizes or dtypes");
}

CompareOptions CompareFlags::parse() const {
  CompareOptions o;
  o.price_old = parse_optional_positive(price_old, "--price-old");
  o.price_new = parse_optional_positive(price_new, "--price-new");
  o.tokens = parse_optional_positive(tokens, "--tokens");
  o.gpus = parse_size(gpus, "--gpus");
  o.strict = strict;
  o.force = force;
  return o;
}

namespace {
struct CompareCliOptions {
  std::string old_path, new_path;
  CompareFlags flags;
  OutputOptions out;
};
}  // namespace

void register_compare(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CompareCliOptions>();
  auto* cmd = app.add_subcommand("compare", "Two training runs side by side: speedup per sequence "
                                            "length with intervals, MFU, memory, $/token, stack check");
  cmd->add_option("OLD", o->old_path, "Log of the GPU you have")->required();
  cmd->add_option("NEW", o->new_path, "Log of the GPU you consider")->required();
  o->flags.add_to(*cmd);
  o->out.add_to(*cmd);
  cmd->callback([&ctx, o] {
    const Comparison c = compare_runs(read_run_log(o->old_path), read_run_log(o->new_path), ctx.catalog(),
                                      ctx.data_dir() / "models", o->flags.parse());
    o->out.emit(report::comparison_document(c), report::comparison_json(c));
  });
}

}  // namespace ub::cli
