// The offloaded optimizer (--offload-optimizer, DeepSpeed's CPU Adam): this rank's fp32 master
// weights, AdamW moments and reduced gradient shard in pinned host memory, the update on host
// threads (model/cpu_adamw.hpp), the new bf16 weights handed back a bucket at a time.
//
// Buckets are updated in the order they are queued, by one dispatcher thread that spreads each
// bucket's slice over the work pool and then calls `updated(bucket)` (which queues the copy of
// its bf16 weights to the GPU, so copies overlap the next bucket's update). Without gradient
// clipping a bucket is queued as soon as its gradient is in host memory, so the update overlaps
// the rest of the backward pass; with clipping it waits for the global norm (known only when
// backward ends), then every bucket is queued at once.
#pragma once

#include <cuda_runtime.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "base/work_pool.hpp"
#include "gpu/pinned_buffer.hpp"
#include "model/shard_plan.hpp"
#include "model/train_math.hpp"

namespace ub::gpu {

class HostOptimizer {
 public:
  // `threads`: host threads for AdamW (0: all cores); `device`: the GPU the dispatcher's copies go to.
  HostOptimizer(const ShardPlan& plan, const AdamWParams& adam, size_t threads, int device,
                std::function<void(size_t bucket)> updated);
  ~HostOptimizer();
  HostOptimizer(const HostOptimizer&) = delete;
  HostOptimizer& operator=(const HostOptimizer&) = delete;

  // Pinned host memory it takes: fp32 master weights, moments and gradient shard, bf16 weights.
  static size_t host_bytes(const ShardPlan& plan) { return plan.shard * (4 * sizeof(float) + sizeof(uint16_t)); }

  float* master() const { return master_.as<float>(); }
  float* grads() const { return grads_.as<float>(); }
  uint16_t* weights() const { return w16_.as<uint16_t>(); }  // bf16 bits
  size_t threads() const { return pool_.threads(); }
  bool clipping() const { return adam_.max_grad_norm > 0; }

  // Before a step's first bucket: its AdamW step number (1-based); clip 1 until set_clip.
  void begin(int64_t step);
  void set_clip(float coefficient);
  // Updates `bucket` once `ready` (an event of the copy into host memory) has completed.
  void queue(size_t bucket, cudaEvent_t ready);
  // Waits until every queued bucket is updated and handed back; rethrows a failure.
  void finish();

 private:
  void dispatch();

  const ShardPlan& plan_;
  const AdamWParams adam_;
  const int device_;
  std::function<void(size_t)> updated_;
  PinnedBuffer master_, m_, v_, grads_, w16_;
  WorkPool pool_;
  AdamWScalars scalars_{};
  float clip_ = 1;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<std::pair<size_t, cudaEvent_t>> queue_;
  bool busy_ = false, stopping_ = false;
  std::exception_ptr error_;
  std::thread dispatcher_;
};

}  // namespace ub::gpu
