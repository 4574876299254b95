// Records into the history as they are written; see record_sink.hpp.
#include "history/record_sink.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "core/history/stored_run.hpp"
#include "history/history_store.hpp"

namespace ub::history {

namespace {

class HistorySink {
 public:
  HistorySink(const std::string& spec, std::string file) : store_(spec), file_(std::move(file)) {}

  void operator()(const std::string& line) {
    if (failed_) return;
    try {
      if (line.find("\"type\":\"context\"") != std::string::npos) lines_.clear();  // a new run
      lines_.push_back(line);
      store_.add_runs({run_of_records(lines_, file_)}, file_);
    } catch (const std::exception& e) {
      failed_ = true;
      std::fprintf(stderr,
                   "upgradebench: warning: the history database stopped taking records (%s); they are all in %s: "
                   "add them with `upgradebench history add %s`\n",
                   e.what(), file_.c_str(), file_.c_str());
    }
  }

 private:
  HistoryStore store_;
  std::string file_;
  std::vector<std::string> lines_;
  bool failed_ = false;
};

}  // namespace

void record_into_history(RecordWriter& writer, const std::string& spec) {
  auto sink = std::make_shared<HistorySink>(spec, writer.path().string());
  writer.also_to([sink](const std::string& line) { (*sink)(line); });
}

}  // namespace ub::history
