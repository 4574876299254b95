// Records into the history as they are written; see record_sink.hpp.
#include "store/record_sink.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "analysis/history/stored_run.hpp"
#include "store/history_store.hpp"

namespace ub::history {

namespace {

class HistorySink {
 public:
  HistorySink(const std::string& spec, std::string file) : store_(spec), file_(std::move(file)) {}
  ~HistorySink() { store(); }  // what the last batch held

  void operator()(const std::string& line) {
    if (failed_) return;
    if (is_context_line(line)) {  // a new run: the last one's records first
      store();
      lines_.clear();
    }
    lines_.push_back(line);
    ++pending_;
    // Each store reads the whole run again: records arriving faster than one a second go in
    // batches that grow with the run (a sixteenth of it), so a run of n records costs O(n), not
    // O(n^2), and a run stays at most a sixteenth or a second behind its file.
    if (pending_ * 16 >= lines_.size() || std::chrono::steady_clock::now() - stored_at_ >= std::chrono::seconds(1)) {
      store();
    }
  }

 private:
  void store() {
    if (failed_ || pending_ == 0) return;
    try {
      store_.add_runs({run_of_records(lines_, file_)}, file_);
      pending_ = 0;
      stored_at_ = std::chrono::steady_clock::now();
    } catch (const std::exception& e) {
      failed_ = true;
      std::fprintf(stderr,
                   "upgradebench: warning: the history database stopped taking records (%s); they are all in %s: "
                   "add them with `upgradebench history add %s`\n",
                   e.what(), file_.c_str(), file_.c_str());
    }
  }

  HistoryStore store_;
  std::string file_;
  std::vector<std::string> lines_;
  size_t pending_ = 0;  // records not stored yet
  std::chrono::steady_clock::time_point stored_at_;
  bool failed_ = false;
};

}  // namespace

void record_into_history(RecordWriter& writer, const std::string& spec) {
  auto sink = std::make_shared<HistorySink>(spec, writer.path().string());
  writer.also_to([sink](const std::string& line) { (*sink)(line); });
}

}  // namespace ub::history
