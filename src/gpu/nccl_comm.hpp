// One NCCL communicator per rank, and what keeps a failure from hanging the job: NCCL's
// asynchronous errors are polled on a thread, and the communicator can be aborted from any thread
// (ncclCommAbort ends the collectives in flight), which the job's watchdog (dist/rendezvous.hpp)
// does when any rank fails. Errors of NCCL calls throw WorkError through the one check family.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "facts/dtype.hpp"
#include "gpu/check.hpp"
#include "gpu/cuda_raii.hpp"

#define UB_NCCL_CHECK(expr) UB_CHECK_GEN(expr, ncclSuccess, ncclGetErrorString, "NCCL")

namespace ub::gpu {

// A new unique id (rank 0 makes it; the rendezvous carries it to the others), as bytes.
std::string nccl_unique_id();
// "2.28.3": the NCCL loaded.
std::string nccl_loaded_version();
// NCCL's type for a dtype (bf16, fp16, fp32, fp8 e4m3); UsageError for others.
ncclDataType_t nccl_type(Dtype d);

class NcclComm {
 public:
  // Joins the communicator `unique_id` as `rank` of `world` on the current device.
  NcclComm(const std::string& unique_id, int world, int rank);
  // Destroys the communicator (an aborted one is freed by its abort).
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  ncclComm_t get() const { return comm_; }
  int rank() const { return rank_; }
  int world() const { return world_; }
  // Ends every operation in flight and the communicator; safe from any thread, once.
  void abort();
  // From now on an asynchronous NCCL error calls `on_error` (once, on a polling thread).
  void watch(std::function<void(const std::string&)> on_error);

  // Small collectives for bookkeeping, on the communicator's own stream (each synchronises): every
  // rank must call them in the same order.
  bool any_rank(bool mine);                                  // true when any rank passed true
  uint64_t sum_over_ranks(uint64_t mine);
  std::vector<double> gather_from_ranks(const std::vector<double>& mine);  // rank-major, world x size

 private:
  void* scratch(size_t bytes);

  // The stream and the scratch buffer own themselves and come first: the communicator is the
  // constructor's last step, so a constructor that throws leaves nothing behind.
  Stream stream_;
  DeviceBuffer scratch_;
  ncclComm_t comm_ = nullptr;
  int world_ = 1, rank_ = 0;
  std::atomic<bool> aborted_{false}, stopping_{false};
  std::mutex abort_mutex_;
  std::thread poller_;
};

}  // namespace ub::gpu
