// Files or stored runs as logs; see run_inputs.hpp.
#include "cli/run_inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "base/error.hpp"
#include "base/text.hpp"
#include "store/history_store.hpp"

namespace ub::cli {

namespace {

constexpr const char* kPrefix = "run:";
constexpr int64_t kMaxRunsSelected = 100'000;

// One id of `part` (a whole selection element, named in the error): a number from 1 on.
int64_t parse_id(const std::string& text, const std::string& part, const std::string& arg) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v <= 0) {
    throw UsageError(fmt::format("{}: '{}' is not a run id: ids are the numbers from 1 on that `history list` shows "
                                 "(ID, FIRST-LAST or ID,ID,...)", arg, part));
  }
  return v;
}

}  // namespace

std::vector<int64_t> parse_run_ids(const std::string& ids, const std::string& arg) {
  std::vector<int64_t> out;
  for (const std::string& part : split(ids, ',')) {
    const size_t dash = part.find('-');
    if (dash == std::string::npos) {
      out.push_back(parse_id(part, part, arg));
      continue;
    }
    const int64_t first = parse_id(part.substr(0, dash), part, arg), last = parse_id(part.substr(dash + 1), part, arg);
    if (last < first || last - first >= kMaxRunsSelected) {
      throw UsageError(fmt::format("{}: '{}' is not a range of run ids (first-last, at most {} runs)", arg, part, kMaxRunsSelected));
    }
    for (int64_t id = first; id <= last; ++id) out.push_back(id);
  }
  if (out.empty()) throw UsageError(fmt::format("{}: no run id (run:ID, run:FIRST-LAST or run:ID,ID,...)", arg));
  std::vector<int64_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (const auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end()) {
    throw UsageError(fmt::format("{}: run {} is selected twice: each run once", arg, *twice));
  }
  return out;
}

void LogInputs::add_to(CLI::App& cmd) {
  cmd.add_option("--db", db, "History database that run:ID selections read (default: the one `history` uses)");
}

LineSource LogInputs::read(const std::string& arg) const {
  std::error_code ec;
  if (arg.rfind(kPrefix, 0) != 0 || std::filesystem::exists(arg, ec)) return LineSource::file(arg);
  const std::vector<int64_t> ids = parse_run_ids(arg.substr(std::string(kPrefix).size()), arg);
  const std::string spec = db.empty() ? history::default_database() : db;
  history::require_existing(spec, !db.empty());
  const history::HistoryStore store(spec, history::Access::read_only);
  return store.run_text(ids, arg);
}

}  // namespace ub::cli
