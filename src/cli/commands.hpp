// One registration function per subcommand; each lives in its own cmd_<name>.cpp.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.hpp"

namespace ub::cli {

void register_specs(CLI::App& app, Context& ctx);
void register_flops(CLI::App& app, Context& ctx);
void register_decide(CLI::App& app, Context& ctx);
void register_env(CLI::App& app, Context& ctx);
void register_bandwidth(CLI::App& app, Context& ctx);
void register_mamf(CLI::App& app, Context& ctx);
void register_attention(CLI::App& app, Context& ctx);
void register_compare(CLI::App& app, Context& ctx);
void register_memfit(CLI::App& app, Context& ctx);
void register_report(CLI::App& app, Context& ctx);
void register_train(CLI::App& app, Context& ctx);
void register_sweep(CLI::App& app, Context& ctx);
void register_nccl(CLI::App& app, Context& ctx);
void register_decompose(CLI::App& app, Context& ctx);
void register_predict(CLI::App& app, Context& ctx);
void register_history(CLI::App& app, Context& ctx);
void register_suite(CLI::App& app, Context& ctx);

// Exit code of a measurement stopped by Ctrl-C (128 + SIGINT), its records kept.
inline constexpr int kExitInterrupted = 130;
// Exit code of a training run that did not fit in device memory (its train_oom record written).
inline constexpr int kExitOutOfMemory = 3;

}  // namespace ub::cli
