// A fixed set of host threads that run the parts of one job at a time: `run(n, f)` calls f(0) ..
// f(n - 1) across the threads (the caller's thread takes part) and returns when all are done.
// What the offloaded optimizer's AdamW runs on; the first exception thrown by a part is
// rethrown to the caller once every part has ended. One caller at a time.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ub {

class WorkPool {
 public:
  // `threads` in all, the caller's included (at least 1).
  explicit WorkPool(size_t threads);
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  size_t threads() const { return workers_.size() + 1; }
  void run(size_t parts, const std::function<void(size_t)>& part);

 private:
  void work();
  // Takes and runs parts of the current job until none is left.
  void drain(std::unique_lock<std::mutex>& lock);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(size_t)>* job_ = nullptr;
  size_t next_ = 0, parts_ = 0, running_ = 0;
  unsigned long long generation_ = 0;
  std::exception_ptr error_;
  bool stopping_ = false;
};

}  // namespace ub
