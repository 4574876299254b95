// NCCL communicators; see nccl_comm.hpp.
#include "gpu/nccl_comm.hpp"

#include <fmt/format.h>

#include <chrono>

#include "base/error.hpp"

namespace ub::gpu {

std::string nccl_unique_id() {
  ncclUniqueId id;
  UB_NCCL_CHECK(ncclGetUniqueId(&id));
  return std::string(id.internal, sizeof id.internal);
}

std::string nccl_loaded_version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "";
  return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
}

ncclDataType_t nccl_type(Dtype d) {
  switch (d) {
    case Dtype::bf16: return ncclBfloat16;
    case Dtype::fp16: return ncclFloat16;
    case Dtype::fp32: return ncclFloat32;
    case Dtype::fp8: return ncclFloat8e4m3;
    default: throw UsageError(fmt::format("nccl: no NCCL type for {}", to_string(d)));
  }
}

NcclComm::NcclComm(const std::string& unique_id, int world, int rank) : world_(world), rank_(rank) {
  ncclUniqueId id;
  if (unique_id.size() != sizeof id.internal) throw WorkError("nccl: the unique id from rank 0 has the wrong size");
  std::copy(unique_id.begin(), unique_id.end(), id.internal);
  UB_NCCL_CHECK(ncclCommInitRank(&comm_, world, id, rank));
}

NcclComm::~NcclComm() {
  stopping_ = true;
  if (poller_.joinable()) poller_.join();
  std::lock_guard lock(abort_mutex_);
  if (comm_ && !aborted_.load()) ncclCommDestroy(comm_);
}

void* NcclComm::scratch(size_t bytes) {
  if (bytes > scratch_.bytes()) {
    scratch_ = DeviceBuffer();  // the old one first: the new one may need its memory
    scratch_ = DeviceBuffer(bytes);
  }
  return scratch_.get();
}

bool NcclComm::any_rank(bool mine) {
  const int32_t flag = mine ? 1 : 0;
  auto* d = static_cast<int32_t*>(scratch(sizeof flag));
  int32_t result = 0;
  UB_CUDA_CHECK(cudaMemcpyAsync(d, &flag, sizeof flag, cudaMemcpyHostToDevice, stream_.get()));
  UB_NCCL_CHECK(ncclAllReduce(d, d, 1, ncclInt32, ncclMax, comm_, stream_.get()));
  UB_CUDA_CHECK(cudaMemcpyAsync(&result, d, sizeof result, cudaMemcpyDeviceToHost, stream_.get()));
  UB_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  return result != 0;
}

uint64_t NcclComm::sum_over_ranks(uint64_t mine) {
  auto* d = static_cast<uint64_t*>(scratch(sizeof mine));
  uint64_t result = 0;
  UB_CUDA_CHECK(cudaMemcpyAsync(d, &mine, sizeof mine, cudaMemcpyHostToDevice, stream_.get()));
  UB_NCCL_CHECK(ncclAllReduce(d, d, 1, ncclUint64, ncclSum, comm_, stream_.get()));
  UB_CUDA_CHECK(cudaMemcpyAsync(&result, d, sizeof result, cudaMemcpyDeviceToHost, stream_.get()));
  UB_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  return result;
}

std::vector<double> NcclComm::gather_from_ranks(const std::vector<double>& mine) {
  const size_t n = mine.size();
  auto* d = static_cast<double*>(scratch(n * sizeof(double) * static_cast<size_t>(world_ + 1)));
  std::vector<double> all(n * static_cast<size_t>(world_));
  UB_CUDA_CHECK(cudaMemcpyAsync(d, mine.data(), n * sizeof(double), cudaMemcpyHostToDevice, stream_.get()));
  UB_NCCL_CHECK(ncclAllGather(d, d + n, n, ncclFloat64, comm_, stream_.get()));
  UB_CUDA_CHECK(cudaMemcpyAsync(all.data(), d + n, all.size() * sizeof(double), cudaMemcpyDeviceToHost, stream_.get()));
  UB_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  return all;
}

void NcclComm::abort() {
  std::lock_guard lock(abort_mutex_);
  if (aborted_.exchange(true) || !comm_) return;
  ncclCommAbort(comm_);
}

void NcclComm::watch(std::function<void(const std::string&)> on_error) {
  poller_ = std::thread([this, on_error = std::move(on_error)] {
    while (!stopping_.load() && !aborted_.load()) {
      ncclResult_t async = ncclSuccess;
      if (ncclCommGetAsyncError(comm_, &async) == ncclSuccess && async != ncclSuccess && async != ncclInProgress) {
        on_error(fmt::format("NCCL asynchronous error on rank {}: {} ({})", rank_, ncclGetErrorString(async),
                             ncclGetLastError(comm_)));
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
}

}  // namespace ub::gpu
