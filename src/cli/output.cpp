// Output format selection; see output.hpp.
#include "cli/output.hpp"

#include <cstdio>

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
  if (json) out = j.dump(2) + "\n";
  else if (csv) out = report::render_csv(doc);
  else if (md) out = report::render_markdown(doc);
  else out = report::render_text(doc);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

}  // namespace ub::cli
