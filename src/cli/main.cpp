// upgradebench: one binary, one subcommand per job (DESIGN.md lists them).
// Exit codes: 0 success, 1 the work failed, 2 a usage error (what was typed cannot be acted on).
#include <fmt/format.h>

#include <charconv>
#include <cstdint>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <regex>
#include <string>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"

namespace {

// One line on stderr, whatever the message holds: file data in it (a kernel name, a line of a log)
// is shown with its control characters escaped, never obeyed by the terminal.
void print_error(const std::string& text, const char* tail = "") {
  const std::string safe = ub::escape_control(text);
  std::fprintf(stderr, "upgradebench: error: %s%s\n", safe.c_str(), tail);
}

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

// A number is written in decimal: the converter would also take 0x10 as 16, 0b11 as 3 and " 3 "
// as 3, none of which a user means by a count or a price.
bool decimal_number(const std::string& v) {
  static const std::regex number(R"([+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)");
  return std::regex_match(v, number);
}

// A value given empty or blank (--db '', --seqlens ' ') is a typing or quoting mistake, never
// "not given": read as the default it would write to the default database, or count all layers.
// Every option and argument that takes a value refuses one, and a number option a number that is
// not decimal.
void check_option_values(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_expected_max() == 0) continue;  // a flag
    const std::string type = opt->get_type_name();
    const bool numeric = type == "INT" || type == "UINT" || type == "FLOAT";
    const bool whole = type == "UINT", integer = type == "INT";
    // CLI11 names an option by one of its names; one of several (-o, --page, --out) says them all,
    // the one typed among them.
    const std::string names = opt->get_lnames().size() + opt->get_snames().size() > 1
                                  ? " for " + opt->get_name(false, true) : std::string();
    opt->check(CLI::Validator(
        [numeric, whole, integer, names](std::string& v) {
          if (v.find_first_not_of(" \t\r\n") == std::string::npos) {
            return fmt::format("{}{} (give one, or leave the option out)", v.empty() ? "an empty value" : "a blank value",
                               names);
          }
          if (numeric && !decimal_number(v)) return fmt::format("'{}' is not a decimal number", ub::printable(v));
          // An unsigned option: digits only (a '-1' would wrap to 2^64 - 1), within 64 bits.
          if (whole) {
            uint64_t parsed = 0;
            const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
            if (v.find_first_not_of("0123456789") != std::string::npos) {
              return fmt::format("'{}' is not a whole number of 0 or more", ub::printable(v));
            }
            if (ec != std::errc() || end != v.data() + v.size()) {
              return fmt::format("'{}' is past the largest it takes, 18446744073709551615", ub::printable(v));
            }
          }
          // A signed whole option past 64 bits would be clamped and quoted as the clamp.
          if (integer && v.find_first_not_of("+-0123456789") == std::string::npos) {
            int64_t parsed = 0;
            const char* begin = v.data() + (v.front() == '+' ? 1 : 0);
            if (std::from_chars(begin, v.data() + v.size(), parsed).ec == std::errc::result_out_of_range) {
              return v.front() == '-'
                         ? fmt::format("'{}' is past the smallest it takes, -9223372036854775808", ub::printable(v))
                         : fmt::format("'{}' is past the largest it takes, 9223372036854775807", ub::printable(v));
            }
          }
          return std::string();
        },
        "", "not empty"));
  }
  for (CLI::App* sub : app.get_subcommands({})) check_option_values(*sub);
}

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
  check_option_values(app);
  // A first word that is not an option and not a command is a mistyped command: name it.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->check_name(argv[1]);
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      print_error(fmt::format("unknown command '{}'; the commands are {} (see --help)", argv[1], names));
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
        print_error(fmt::format("unknown {0} command '{1}'; the {0} commands are {2} (see {0} --help)", argv[1], argv[2],
                                names));
        return 2;
      }
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ConversionError& e) {
    // CLI11 says "Could not convert: --steps = 99999999999": said as the other value errors are.
    const std::string what = e.what(), lead = "Could not convert: ";
    const size_t eq = what.find(" = ");
    if (what.rfind(lead, 0) == 0 && eq != std::string::npos) {
      print_error(fmt::format("{}: '{}' is not a value it takes (a number of its kind and range: see --help)",
                              what.substr(lead.size(), eq - lead.size()), what.substr(eq + 3)));
    } else {
      print_error(what, " (see --help)");
    }
    return 2;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    print_error(e.what(), " (see --help)");
    return 2;
  } catch (const ub::UsageError& e) {
    print_error(e.what());
    return 2;
  } catch (const ub::WorkError& e) {
    print_error(e.what());
    return 1;
  } catch (const nlohmann::json::exception& e) {
    print_error("malformed JSON: " + ub::json_error_text(e));
    return 1;
  } catch (const std::bad_alloc&) {
    print_error("out of memory: an input (or the work it asks for) is larger than this machine's memory");
    return 1;
  } catch (const std::exception& e) {
    print_error(e.what());
    return 1;
  }
  // Output that did not reach its destination (a full disk, a closed stdout) is a failure, not a success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "upgradebench: error: writing the output failed: %s\n", std::strerror(errno));
    return 1;
  }
  return ctx.exit_code;
}
