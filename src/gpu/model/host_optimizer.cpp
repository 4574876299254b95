// AdamW of the rank's shard on host threads; see host_optimizer.hpp.
#include "gpu/model/host_optimizer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "base/error.hpp"
#include "base/units.hpp"
#include "gpu/check.hpp"
#include "model/cpu_adamw.hpp"

namespace ub::gpu {

namespace {

// Elements each thread takes at a time: large enough that a part is not dominated by handing it
// out, small enough that a bucket spreads over every thread.
constexpr size_t kPart = 1 << 16;

}  // namespace

HostOptimizer::HostOptimizer(const ShardPlan& plan, const AdamWParams& adam, size_t threads, int device,
                             std::function<void(size_t)> updated)
    : plan_(plan), adam_(adam), device_(device), updated_(std::move(updated)),
      master_(plan.shard * sizeof(float), "the offloaded optimizer's fp32 master weights"),
      m_(plan.shard * sizeof(float), "the offloaded optimizer's first moments"),
      v_(plan.shard * sizeof(float), "the offloaded optimizer's second moments"),
      grads_(plan.shard * sizeof(float), "the offloaded optimizer's gradient shard"),
      w16_(plan.shard * sizeof(uint16_t), "the offloaded optimizer's bf16 weights"),
      pool_(threads ? threads : std::max(1u, std::thread::hardware_concurrency())) {
  dispatcher_ = std::thread([this] { dispatch(); });
}

HostOptimizer::~HostOptimizer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  dispatcher_.join();
}

void HostOptimizer::begin(int64_t step) {
  std::lock_guard lock(mutex_);
  scalars_ = adamw_scalars(adam_, step);
  clip_ = 1;
}

void HostOptimizer::set_clip(float coefficient) {
  std::lock_guard lock(mutex_);
  clip_ = coefficient;
}

void HostOptimizer::queue(size_t bucket, cudaEvent_t ready) {
  {
    std::lock_guard lock(mutex_);
    queue_.emplace_back(bucket, ready);
  }
  wake_.notify_all();
}

void HostOptimizer::finish() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return (queue_.empty() && !busy_) || error_; });
  if (error_) {
    queue_.clear();
    std::rethrow_exception(std::exchange(error_, nullptr));
  }
}

void HostOptimizer::dispatch() {
  bool device_set = false;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || (!queue_.empty() && !error_); });
    if (stopping_) return;
    const auto [bucket, ready] = queue_.front();
    queue_.pop_front();
    busy_ = true;
    const AdamWScalars k = scalars_;
    const float clip = clip_;
    lock.unlock();
    try {
      if (!device_set) {  // this thread queues the copies back to the GPU
        UB_CUDA_CHECK(cudaSetDevice(device_));
        device_set = true;
      }
      UB_CUDA_CHECK(cudaEventSynchronize(ready));
      const ShardBucket& b = plan_.buckets[bucket];
      const size_t at = b.shard_offset, n = b.slice;
      pool_.run((n + kPart - 1) / kPart, [&](size_t part) {
        const size_t i = at + part * kPart, len = std::min(kPart, at + n - i);
        cpu_adamw(master_.as<float>() + i, m_.as<float>() + i, v_.as<float>() + i, grads_.as<float>() + i,
                  w16_.as<uint16_t>() + i, len, k, clip);
      });
      updated_(bucket);
      lock.lock();
    } catch (...) {
      lock.lock();
      error_ = std::current_exception();
    }
    busy_ = false;
    idle_.notify_all();
  }
}

}  // namespace ub::gpu
