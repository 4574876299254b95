// Data-parallel training over NCCL: every rank runs the step on its own sequences, the gradients
// are averaged, and ZeRO shards what each rank keeps (gpu/model/llama_buffers.hpp's table, the
// slices of model/shard_plan.hpp). The passes (gpu/model/llama_passes.hpp) call in at the
// points where data moves; everything here runs on a communication stream of its own, so it
// overlaps the compute stream, which waits only where it must:
//
//   use(units) / release(units)   ZeRO-3: a unit's weights all-gathered into a slot before a
//                 pass uses them, the next use's units prefetched while this one computes, the
//                 slot given back after (a unit still in a slot is not gathered again)
//   begin_gradients(unit)         ZeRO 2-3: slots for the unit's bucket gradients (their padding
//                 zeroed), waiting for a slot's last reduce-scatter if it must
//   gradient_final(tensor)        when a bucket's last tensor is final: all-reduce (ZeRO-0) or
//                 reduce-scatter (ZeRO 1-3) with NCCL's average, then the squares of what this
//                 rank keeps into the norm; offloaded: the reduced slice copied to host memory
//   finish_backward()             the norm summed over ranks (ZeRO 1-3); the compute stream
//                 waits for every reduction
//   optimizer_step()              AdamW on this rank's part (one launch over a ZeRO-3 shard, one
//                 per bucket slice otherwise, or on host threads when offloaded), then the bf16
//                 weights all-gathered back (ZeRO 1-2) or left for the next step's gathers (3)
//
// Every rank issues the same collectives in the same order (the schedule of uses is fixed, and
// checked at each call). The compute stream's waits are timed with event pairs: the exposed
// communication of a step, the part not hidden behind compute, is their sum.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "gpu/cuda_raii.hpp"
#include "gpu/model/llama_buffers.hpp"
#include "gpu/model/llama_engine.hpp"
#include "gpu/timed_waits.hpp"
#include "model/shard_plan.hpp"

namespace ub::gpu {

class HostOptimizer;

class DataParallel {
 public:
  DataParallel(const EngineOptions& o, LlamaBuffers& b, cudaStream_t compute);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  int rank() const { return rank_; }
  int world() const { return world_; }

  // After the step's norm accumulator is cleared on the compute stream; `next_step` is the AdamW
  // step (1-based) that will follow. With the optimizer offloaded and no clipping the update
  // begins during backward: forward_backward is then always followed by optimizer_step.
  void begin_step(int64_t next_step);
  void use(size_t unit, size_t also = kNone);
  void release(size_t unit, size_t also = kNone);
  void begin_gradients(size_t unit);
  void gradient_final(size_t tensor);
  void finish_backward();
  void optimizer_step(int64_t step);

  // Of the last step (synchronises): milliseconds the compute stream waited for communication,
  // and for the offloaded optimizer (host AdamW and the copies back).
  double exposed_comm_ms() const;
  double exposed_offload_ms() const;

  // The whole of a buffer this rank holds a part of (collective: every rank calls it), fp32.
  enum class Whole { parameters, gradients };
  std::vector<float> assemble(Whole what);
  // Writes the parameters from the whole flat fp32 buffer (every rank passes the same).
  void set_parameters(const std::vector<float>& flat);
  // Initial values into what this rank keeps.
  void init_parameters(uint64_t seed);

  static constexpr size_t kNone = static_cast<size_t>(-1);

 private:
  struct UnitSlot {
    size_t unit = kNone;   // the unit whose weights it holds (kNone: none)
    bool busy = false;     // in use by a pass
    bool used = false;     // ever released (free_ is recorded)
    unsigned long long released_at = 0;
    Event free, gathered;
  };
  void wait(cudaEvent_t e, TimedWaits& into);
  void gather(size_t unit);  // ZeRO-3: into a slot, on the comm stream
  size_t slot_of(size_t unit) const;
  void prefetch(size_t use_index);
  void reduce(size_t bucket);
  void* reduced_slice(size_t bucket) const;  // where a bucket's reduce-scatter leaves this rank's slice
  void all_gather_weights();                  // ZeRO 1-2: every bucket's bf16 slices, in place
  // The whole buffer from each rank's shard of it (shard layout, on the device), downloaded.
  std::vector<float> gather_whole(const void* shard, Elem elem);

  const EngineOptions& opt_;
  LlamaBuffers& b_;
  const ShardPlan& plan_;
  const int zero_;
  int world_ = 1, rank_ = 0;
  cudaStream_t compute_;
  Stream comm_, copy_;
  Event step_start_, grad_ready_, slice_reduced_, reduced_, optimized_, weights_back_, copied_back_;
  std::vector<std::vector<size_t>> schedule_;  // the units of each use, in order
  size_t next_use_ = 0;
  std::vector<UnitSlot> unit_slots_;
  unsigned long long releases_ = 0;
  std::vector<size_t> pending_;       // per bucket: tensors not final yet
  std::vector<bool> reduced_buckets_;
  size_t next_bucket_slot_ = 0;
  std::vector<std::unique_ptr<Event>> bucket_slot_free_;
  std::vector<bool> bucket_slot_used_;
  std::vector<int> bucket_slot_of_;   // per bucket: its slot this step (-1: none)
  size_t next_slice_slot_ = 0;
  std::vector<std::unique_ptr<Event>> slice_slot_free_;
  std::vector<bool> slice_slot_used_;
  std::vector<std::unique_ptr<Event>> on_host_;  // per bucket: its reduced slice is in host memory
  std::unique_ptr<HostOptimizer> host_;
  TimedWaits comm_waits_, offload_waits_;
};

}  // namespace ub::gpu
