// upgradebench: one binary, one subcommand per job (DESIGN.md lists them).
// Exit codes: 0 success, 1 the work failed, 2 a usage error (what was typed cannot be acted on).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "cli/commands.hpp"

namespace {

// CLI11's help, less what it says of itself: "Excludes: --csv --md" beside --json tells a reader
// nothing the option's own words do not (giving two formats is refused with that message).
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string s = CLI::Formatter::make_option_opts(opt);
    if (const size_t at = s.find(" Excludes:"); at != std::string::npos) s.erase(at);
    return s;
  }
};

}  // namespace

int main(int argc, char** argv) {
  ub::cli::Context ctx;
  ctx.argv.assign(argv, argv + argc);
  CLI::App app{"upgradebench: is the new GPU worth it for your workload? Measured, compared, "
               "decided."};
  app.name("upgradebench");  // not the path it was started by, in every Usage line
  app.formatter(std::make_shared<HelpFormatter>());
  app.set_version_flag("--version", "upgradebench 0.1.0");
  app.require_subcommand(1);
  app.add_option("--data-dir", ctx.data_dir_flag,
                 "Folder with accelerators.json and models/ (default: the installed data)");
  ub::cli::register_specs(app, ctx);
  ub::cli::register_flops(app, ctx);
  ub::cli::register_decide(app, ctx);
  ub::cli::register_env(app, ctx);
  ub::cli::register_bandwidth(app, ctx);
  ub::cli::register_mamf(app, ctx);
  ub::cli::register_attention(app, ctx);
  ub::cli::register_train(app, ctx);
  ub::cli::register_sweep(app, ctx);
  ub::cli::register_suite(app, ctx);
  ub::cli::register_nccl(app, ctx);
  ub::cli::register_decompose(app, ctx);
  ub::cli::register_predict(app, ctx);
  ub::cli::register_compare(app, ctx);
  ub::cli::register_memfit(app, ctx);
  ub::cli::register_report(app, ctx);
  ub::cli::register_history(app, ctx);
  // A first word that is not an option and not a command is a mistyped command: name it.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->check_name(argv[1]);
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "upgradebench: error: unknown command '%s'; the commands are %s (see --help)\n", argv[1],
                   names.c_str());
      return 2;
    }
  }
  // The same one level down: `history frobnicate`.
  if (argc > 2 && argv[2][0] != '-') {
    const CLI::App* cmd = nullptr;
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->check_name(argv[1])) cmd = sub;
    }
    if (cmd && !cmd->get_subcommands({}).empty()) {
      std::string names;
      bool known = false;
      for (const CLI::App* sub : cmd->get_subcommands({})) {
        known = known || sub->check_name(argv[2]);
        names += (names.empty() ? "" : ", ") + sub->get_name();
      }
      if (!known) {
        std::fprintf(stderr, "upgradebench: error: unknown %s command '%s'; the %s commands are %s (see %s --help)\n",
                     argv[1], argv[2], argv[1], names.c_str(), argv[1]);
        return 2;
      }
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "upgradebench: error: %s (see --help)\n", e.what());
    return 2;
  } catch (const ub::UsageError& e) {
    std::fprintf(stderr, "upgradebench: error: %s\n", e.what());
    return 2;
  } catch (const ub::WorkError& e) {
    std::fprintf(stderr, "upgradebench: error: %s\n", e.what());
    return 1;
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "upgradebench: error: malformed JSON: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "upgradebench: error: %s\n", e.what());
    return 1;
  }
  // Output that did not reach its destination (a full disk, a closed stdout) is a failure, not a success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "upgradebench: error: writing the output failed: %s\n", std::strerror(errno));
    return 1;
  }
  return ctx.exit_code;
}
