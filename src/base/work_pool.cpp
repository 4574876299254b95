// Host threads for one job at a time; see work_pool.hpp.
#include "base/work_pool.hpp"

#include <algorithm>
#include <utility>

namespace ub {

WorkPool::WorkPool(size_t threads) {
  for (size_t i = 1; i < std::max<size_t>(threads, 1); ++i) workers_.emplace_back([this] { work(); });
}

WorkPool::~WorkPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void WorkPool::drain(std::unique_lock<std::mutex>& lock) {
  while (job_ && next_ < parts_) {
    const size_t i = next_++;
    ++running_;
    const std::function<void(size_t)>& f = *job_;
    lock.unlock();
    std::exception_ptr e;
    try {
      f(i);
    } catch (...) {
      e = std::current_exception();
    }
    lock.lock();
    if (e && !error_) error_ = e;
    if (--running_ == 0 && next_ >= parts_) done_.notify_all();
  }
}

void WorkPool::work() {
  std::unique_lock lock(mutex_);
  unsigned long long seen = 0;
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || (job_ && generation_ != seen && next_ < parts_); });
    if (stopping_) return;
    seen = generation_;
    drain(lock);
  }
}

void WorkPool::run(size_t parts, const std::function<void(size_t)>& part) {
  if (parts == 0) return;
  std::unique_lock lock(mutex_);
  job_ = &part;
  next_ = 0, parts_ = parts, error_ = nullptr;
  ++generation_;
  wake_.notify_all();
  drain(lock);
  done_.wait(lock, [&] { return running_ == 0 && next_ >= parts_; });
  job_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace ub
