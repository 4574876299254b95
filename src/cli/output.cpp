// Output format selection; see output.hpp.
#include "cli/output.hpp"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "base/text.hpp"

namespace ub::cli {

void OutputOptions::add_to(CLI::App& cmd) {
  auto* j = cmd.add_flag("--json", json, "JSON on stdout (stable keys: docs/json.md)");
  auto* c = cmd.add_flag("--csv", csv, "CSV on stdout (the tables only)");
  auto* m = cmd.add_flag("--md", md, "Markdown on stdout");
  j->excludes(c)->excludes(m);
  c->excludes(m);
}

void OutputOptions::emit(const report::Document& doc, const nlohmann::json& j) const {
  std::string out;
  // JSON in ASCII: every other character as \uXXXX, so a name read from a file (a C1 control, a
  // bidirectional override) reaches the terminal as text; a byte of no UTF-8 as U+FFFD.
  if (json) out = j.dump(2, ' ', true, nlohmann::json::error_handler_t::replace) + "\n";
  else if (csv) out = report::render_csv(doc);
  else if (md) out = report::render_markdown(doc);
  else out = report::render_text(doc);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

void warn(const std::string& text) {
  std::fprintf(stderr, "upgradebench: warning: %s\n", escape_control(text).c_str());
}

namespace {

// "path:12: ..." or "path (the run from line 40):12: ..." (a run of a file of several).
bool names_a_line(std::string_view w, std::string_view path) {
  if (w.substr(0, path.size()) != path) return false;
  w.remove_prefix(path.size());
  if (w.substr(0, 19) == " (the run from line") w.remove_prefix(std::min(w.size(), w.find(')') + 1));
  if (w.empty() || w.front() != ':') return false;
  w.remove_prefix(1);
  const size_t digits = w.find_first_not_of("0123456789");
  return digits > 0 && digits != std::string_view::npos && w[digits] == ':';
}

}  // namespace

void warn_about_lines(const std::vector<std::string>& warnings, const std::string& path) {
  for (const std::string& w : warnings) {
    if (names_a_line(w, path)) warn(w);
  }
}

}  // namespace ub::cli
