// The collective benchmark's descriptor; see nccl.hpp.
#include "measure/nccl.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/units.hpp"
#include "gpu/cuda_elem.hpp"
#include "gpu/cuda_raii.hpp"
#include "gpu/kernels/collective_check.cuh"
#include "gpu/nccl_comm.hpp"
#include "measure/injected_wrong.hpp"

namespace ub::measure {

namespace {

gpu::Elem elem_of(Dtype d) {
  switch (d) {
    case Dtype::bf16: return gpu::Elem::bf16;
    case Dtype::fp16: return gpu::Elem::f16;
    case Dtype::fp8: return gpu::Elem::e4m3;
    default: return gpu::Elem::f32;
  }
}

// Whether NCCL can run the collective with its input and output in one buffer.
bool has_in_place(Collective c) { return c != Collective::alltoall && c != Collective::sendrecv; }

// The statistics of a summary, as they travel between ranks.
std::vector<double> pack(const Summary& s) {
  return {static_cast<double>(s.n), s.mean, s.stddev, s.min, s.max, s.median, s.q1, s.q3, s.median_low, s.median_high};
}
Summary unpack(const double* v) {
  Summary s;
  s.n = static_cast<size_t>(v[0]);
  s.mean = v[1], s.stddev = v[2], s.min = v[3], s.max = v[4], s.median = v[5], s.q1 = v[6], s.q3 = v[7];
  s.median_low = v[8], s.median_high = v[9];
  return s;
}
Summary scaled(Summary s, double f) {
  for (double* x : {&s.mean, &s.stddev, &s.min, &s.max, &s.median, &s.q1, &s.q3, &s.median_low, &s.median_high}) *x *= f;
  return s;
}

}  // namespace

class NcclPoint : public Point {
 public:
  NcclPoint(NcclBenchmark& b, NcclRecord rec, Dtype dtype, cudaStream_t s)
      : b_(b), rec_(std::move(rec)), elem_(elem_of(dtype)), type_(gpu::nccl_type(dtype)), s_(s) {
    const size_t esize = static_cast<size_t>(gpu::bytes_per_element(elem_));
    auto* send = static_cast<char*>(b.send_->get());
    auto* recv = static_cast<char*>(b.recv_->get());
    const size_t part = part_count();
    recv_ = recv;
    send_ = send;
    if (rec_.in_place) {
      // NCCL's in-place layouts: the input is the output, or the rank's part of it.
      if (rec_.collective == Collective::all_gather) send_ = recv + static_cast<size_t>(comm().rank()) * part * esize;
      else if (rec_.collective == Collective::reduce_scatter) recv_ = send + static_cast<size_t>(comm().rank()) * part * esize;
      else send_ = recv;
    }
  }

  std::optional<std::string> check() override {
    const int rank = comm().rank(), world = comm().world();
    // Poison what receives (0xFF bytes: NaN in every float type), then write the inputs.
    UB_CUDA_CHECK(cudaMemsetAsync(b_.recv_->get(), 0xFF, static_cast<size_t>(rec_.bytes), s_));
    gpu::fill_collective_input(send_, elem_, static_cast<size_t>(rec_.send_count), rank, world, s_);
    collective(s_);
    spoil_if_injected("nccl", recv_, static_cast<size_t>(rec_.recv_count) * static_cast<size_t>(gpu::bytes_per_element(elem_)), s_);
    UB_CUDA_CHECK(cudaMemsetAsync(b_.wrong_->get(), 0, sizeof(unsigned long long), s_));
    gpu::count_collective_mismatches(recv_, elem_, rec_.collective, static_cast<size_t>(rec_.recv_count), part_count(),
                                     rank, world, rec_.root, b_.wrong_->as<unsigned long long>(), s_);
    unsigned long long wrong = 0;
    UB_CUDA_CHECK(cudaMemcpyAsync(&wrong, b_.wrong_->get(), sizeof wrong, cudaMemcpyDeviceToHost, s_));
    UB_CUDA_CHECK(cudaStreamSynchronize(s_));
    rec_.wrong = comm().sum_over_ranks(wrong);
    if (rec_.wrong) return fmt::format("{} output elements wrong over {} ranks", rec_.wrong, world);
    return std::nullopt;
  }

  std::vector<TimedUnit> units() override {
    TimedUnit u;
    u.name = to_string(rec_.collective);
    if (b_.cfg_.graph) {
      graph_ = std::make_unique<gpu::Graph>(s_, [this](cudaStream_t s) { calls(s); });
      u.work = [this](cudaStream_t s) { graph_->launch(s); };
    } else {
      u.work = [this](cudaStream_t s) { calls(s); };
    }
    return {u};
  }

  std::string record(const Measured& m) override {
    rec_.ok = m.error.empty() && !m.timings.empty() && m.timings.front().summary.n > 0;
    if (!m.error.empty()) rec_.error = "check failed: " + m.error;
    if (rec_.ok || m.error.empty()) {
      // Every rank's time per call; the slowest rank's is the collective's.
      const Summary mine = m.timings.empty() ? Summary{} : scaled(m.timings.front().summary, 1.0 / rec_.calls_per_sample);
      const std::vector<double> all = comm().gather_from_ranks(pack(mine));
      const size_t k = pack(mine).size();
      int slowest = 0;
      for (int r = 1; r < comm().world(); ++r) {
        if (all[static_cast<size_t>(r) * k + 5] > all[static_cast<size_t>(slowest) * k + 5]) slowest = r;
      }
      if (rec_.ok) {
        const Summary s = unpack(all.data() + static_cast<size_t>(slowest) * k);
        rec_.time = TimeStats{s, m.timings.front().stop_reason};
        rec_.slowest_rank = slowest;
        rec_.algbw_gbps = gbps_from(static_cast<double>(rec_.bytes), s.median);
        rec_.busbw_gbps = rec_.algbw_gbps * bus_factor(rec_.collective, comm().world());
        rec_.telemetry = m.telemetry;
      }
    }
    b_.run_.emit(rec_);
    b_.results_.push_back(rec_);
    return line(rec_);
  }

  static std::string line(const NcclRecord& r) {
    const std::string head = fmt::format("{:<14} {:<5} {:>12} {:<12}", to_string(r.collective), r.dtype, r.bytes,
                                         r.in_place ? "in-place" : "out-of-place");
    if (!r.ok) return head + " " + r.error;
    return fmt::format("{} {:10.2f} us {:8.2f} GB/s algbw {:8.2f} GB/s busbw  #wrong {}", head, r.time_us(),
                       r.algbw_gbps, r.busbw_gbps, r.wrong);
  }

 private:
  gpu::NcclComm& comm() const { return b_.comm_; }
  // Elements of each rank's part (all_gather, reduce_scatter, alltoall), else of the buffer.
  size_t part_count() const {
    const auto n = static_cast<size_t>(comm().world());
    switch (rec_.collective) {
      case Collective::all_gather: return static_cast<size_t>(rec_.send_count);
      case Collective::reduce_scatter: return static_cast<size_t>(rec_.recv_count);
      case Collective::alltoall: return static_cast<size_t>(rec_.send_count) / n;
      default: return static_cast<size_t>(rec_.recv_count);
    }
  }

  void calls(cudaStream_t s) {
    for (int i = 0; i < rec_.calls_per_sample; ++i) collective(s);
  }

  void collective(cudaStream_t s) {
    const ncclComm_t c = comm().get();
    const int rank = comm().rank(), world = comm().world();
    const auto send_n = static_cast<size_t>(rec_.send_count), recv_n = static_cast<size_t>(rec_.recv_count);
    switch (rec_.collective) {
      case Collective::all_reduce: UB_NCCL_CHECK(ncclAllReduce(send_, recv_, send_n, type_, ncclSum, c, s)); break;
      case Collective::all_gather: UB_NCCL_CHECK(ncclAllGather(send_, recv_, send_n, type_, c, s)); break;
      case Collective::reduce_scatter: UB_NCCL_CHECK(ncclReduceScatter(send_, recv_, recv_n, type_, ncclSum, c, s)); break;
      case Collective::broadcast: UB_NCCL_CHECK(ncclBroadcast(send_, recv_, send_n, type_, rec_.root, c, s)); break;
      case Collective::reduce: UB_NCCL_CHECK(ncclReduce(send_, recv_, send_n, type_, ncclSum, rec_.root, c, s)); break;
      case Collective::alltoall: {
        const size_t part = part_count(), esize = static_cast<size_t>(gpu::bytes_per_element(elem_));
        UB_NCCL_CHECK(ncclGroupStart());
        for (int r = 0; r < world; ++r) {
          UB_NCCL_CHECK(ncclSend(static_cast<const char*>(send_) + static_cast<size_t>(r) * part * esize, part, type_, r, c, s));
          UB_NCCL_CHECK(ncclRecv(static_cast<char*>(recv_) + static_cast<size_t>(r) * part * esize, part, type_, r, c, s));
        }
        UB_NCCL_CHECK(ncclGroupEnd());
        break;
      }
      case Collective::sendrecv:
        UB_NCCL_CHECK(ncclGroupStart());
        UB_NCCL_CHECK(ncclSend(send_, send_n, type_, (rank + 1) % world, c, s));
        UB_NCCL_CHECK(ncclRecv(recv_, recv_n, type_, (rank + world - 1) % world, c, s));
        UB_NCCL_CHECK(ncclGroupEnd());
        break;
    }
  }

  NcclBenchmark& b_;
  NcclRecord rec_;
  gpu::Elem elem_;
  ncclDataType_t type_;
  cudaStream_t s_;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  std::unique_ptr<gpu::Graph> graph_;
};

NcclBenchmark::NcclBenchmark(const NcclConfig& config, DeviceRun& run, gpu::NcclComm& comm)
    : Benchmark(config.timing), cfg_(config), run_(run), comm_(comm) {
  cfg_.validate(comm.world());
  for (Collective c : cfg_.collectives) {
    for (Dtype d : cfg_.dtypes) {
      for (int64_t bytes : cfg_.sizes) {
        for (bool in_place : {false, true}) {
          if ((in_place && (!cfg_.in_place || !has_in_place(c))) || (!in_place && !cfg_.out_of_place)) continue;
          points_.push_back({c, d, bytes, in_place});
        }
      }
    }
  }
  const int64_t most = *std::max_element(cfg_.sizes.begin(), cfg_.sizes.end());
  send_ = std::make_unique<gpu::DeviceBuffer>(static_cast<size_t>(most));
  recv_ = std::make_unique<gpu::DeviceBuffer>(static_cast<size_t>(most));
  wrong_ = std::make_unique<gpu::DeviceBuffer>(sizeof(unsigned long long));
}

NcclBenchmark::~NcclBenchmark() = default;

bool NcclBenchmark::next() {
  if (started_) ++index_;
  started_ = true;
  return index_ < points_.size();
}

NcclRecord NcclBenchmark::record_of(const Current& c) const {
  NcclRecord r;
  r.world_size = comm_.world();
  r.collective = c.collective;
  r.dtype = to_string(c.dtype);
  const CollectiveCounts n =
      collective_counts(c.collective, static_cast<size_t>(c.bytes), static_cast<size_t>(gpu::bytes_per_element(elem_of(c.dtype))),
                        comm_.world());
  r.bytes = static_cast<int64_t>(n.bytes);
  r.send_count = static_cast<int64_t>(n.send), r.recv_count = static_cast<int64_t>(n.recv);
  r.in_place = c.in_place;
  r.root = cfg_.root;
  r.calls_per_sample = calls_per_sample(r.bytes);
  return r;
}

std::string NcclBenchmark::label() const {
  const Current& c = points_[index_];
  return fmt::format("{} {} {} bytes{}", to_string(c.collective), to_string(c.dtype), c.bytes, c.in_place ? " in place" : "");
}

std::unique_ptr<Point> NcclBenchmark::prepare(cudaStream_t stream) {
  const Current& c = points_[index_];
  NcclRecord r = record_of(c);
  if (r.bytes == 0) throw WorkError(fmt::format("{} bytes is less than one element per rank", c.bytes));
  return std::make_unique<NcclPoint>(*this, std::move(r), c.dtype, stream);
}

std::string NcclBenchmark::failed(const WorkError& error, bool) {
  NcclRecord r = record_of(points_[index_]);
  r.error = error.what();
  run_.emit(r);
  results_.push_back(r);
  throw WorkError(fmt::format("rank {}: {}: {}", comm_.rank(), label(), error.what()));  // the job cannot go on
}

}  // namespace ub::measure
