// The bandwidth benchmark's descriptor; see bandwidth.hpp.
#include "measure/bandwidth.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/units.hpp"
#include "facts/gpu_features.hpp"
#include "gpu/cuda_raii.hpp"
#include "gpu/kernels/bandwidth.cuh"
#include "measure/injected_wrong.hpp"

namespace ub::measure {

struct BandwidthBenchmark::Buffers {
  size_t bytes;
  gpu::DeviceBuffer src, dst, scratch;
  Buffers(size_t b, cudaStream_t s) : bytes(b), src(b), dst(b), scratch(sizeof(unsigned long long)) {
    gpu::fill_word_index(src.get(), bytes, s);
  }
};

namespace {

// The checks read a count (or a sum) back from the device.
unsigned long long read_back(const gpu::DeviceBuffer& b, cudaStream_t s) {
  unsigned long long v = 0;
  UB_CUDA_CHECK(cudaMemcpyAsync(&v, b.get(), sizeof v, cudaMemcpyDeviceToHost, s));
  UB_CUDA_CHECK(cudaStreamSynchronize(s));
  return v;
}

}  // namespace

class BandwidthPoint : public Point {
 public:
  BandwidthPoint(BandwidthBenchmark& b, BandwidthRecord rec, cudaStream_t s)
      : b_(b), rec_(std::move(rec)), buf_(*b.buffers_), s_(s), kernel_(gpu::parse_bandwidth_kernel(rec_.kernel)) {}

  std::optional<std::string> check() override {
    const size_t bytes = buf_.bytes;
    auto* scratch = buf_.scratch.as<unsigned long long>();
    if (rec_.op == "read") {
      UB_CUDA_CHECK(cudaMemsetAsync(scratch, 0, sizeof(unsigned long long), s_));
      work()(s_);
      spoil_if_injected("bandwidth", buf_.scratch, s_);
      if (read_back(buf_.scratch, s_) != gpu::sum_of_word_indices(bytes / 4)) {
        return "the sum of the words read is wrong";
      }
      return std::nullopt;
    }
    const bool copy = rec_.op == "copy";
    if (copy) UB_CUDA_CHECK(cudaMemsetAsync(buf_.dst.get(), 0xFF, bytes, s_));
    work()(s_);
    spoil_if_injected("bandwidth", buf_.dst, s_);
    gpu::count_mismatches(buf_.dst.get(), bytes, copy, kPattern, scratch, s_);
    if (const unsigned long long wrong = read_back(buf_.scratch, s_)) return fmt::format("{} words wrong", wrong);
    return std::nullopt;
  }

  std::vector<TimedUnit> units() override { return {{rec_.op, work(), {}, std::nullopt, false}}; }

  std::string record(const Measured& m) override {
    rec_.ok = m.error.empty() && !m.timings.empty();
    if (!m.error.empty()) rec_.error = "validation failed: " + m.error;
    if (rec_.ok) {
      const gpu::Timing& t = m.timings.front();
      rec_.median_gbps = gbps_from(rec_.moved(), t.summary.median);
      rec_.mean_gbps = gbps_from(rec_.moved(), t.summary.mean);
      rec_.max_gbps = gbps_from(rec_.moved(), t.summary.min);
      rec_.time = TimeStats{t.summary, t.stop_reason};
      rec_.telemetry = m.telemetry;
    }
    b_.run_.emit(rec_);
    b_.results_.push_back(rec_);
    return rec_.ok ? fmt::format("{:>5} {:>10} bytes: {:8.1f} GB/s{}", rec_.op, rec_.bytes, rec_.median_gbps,
                                 rec_.in_l2 ? " (in L2)" : "")
                   : fmt::format("{:>5} {:>10} bytes: {}", rec_.op, rec_.bytes, rec_.error);
  }

 private:
  static constexpr unsigned kPattern = 0xA5A5A5A5u;

  gpu::Work work() const {
    const size_t bytes = buf_.bytes;
    void* dst = buf_.dst.get();
    const void* src = buf_.src.get();
    auto* sum = buf_.scratch.as<unsigned long long>();
    const gpu::BandwidthKernel k = kernel_;
    if (rec_.op == "copy") return [=](cudaStream_t s) { gpu::bandwidth_copy(dst, src, bytes, k, s); };
    if (rec_.op == "write") return [=](cudaStream_t s) { gpu::bandwidth_write(dst, bytes, kPattern, k, s); };
    return [=](cudaStream_t s) { gpu::bandwidth_read(src, bytes, sum, k, s); };
  }

  BandwidthBenchmark& b_;
  BandwidthRecord rec_;
  const BandwidthBenchmark::Buffers& buf_;
  cudaStream_t s_;
  gpu::BandwidthKernel kernel_;
};

BandwidthBenchmark::BandwidthBenchmark(const BandwidthConfig& config, DeviceRun& run)
    : Benchmark(config.timing), cfg_(config), run_(run) {
  cfg_.validate();
  // An unknown kernel, or one this GPU lacks, is a usage error before any work.
  if (gpu::parse_bandwidth_kernel(cfg_.kernel) == gpu::BandwidthKernel::bulk) {
    if (const auto why = missing_feature(GpuFeature::bulk_copy, ComputeCapability{run.cc_major, run.cc_minor})) {
      throw UsageError(fmt::format("--kernel bulk: {}", *why));
    }
  }
}

BandwidthBenchmark::~BandwidthBenchmark() = default;

bool BandwidthBenchmark::next() {
  if (!started_) {
    started_ = true;
  } else if (++op_index_ == cfg_.ops.size()) {
    op_index_ = 0;
    ++size_index_;
    buffers_.reset();
  }
  return size_index_ < cfg_.sizes.size();
}

BandwidthRecord BandwidthBenchmark::current() const {
  BandwidthRecord r;
  r.device = run_.device;
  r.op = cfg_.ops[op_index_];
  r.kernel = cfg_.kernel;
  r.bytes = cfg_.sizes[size_index_] / 64 * 64;  // the kernels move whole 64-byte groups
  r.in_l2 = r.moved() <= static_cast<double>(run_.l2_bytes);
  return r;
}

std::string BandwidthBenchmark::label() const {
  const BandwidthRecord r = current();
  return fmt::format("{} {} bytes", r.op, r.bytes);
}

std::unique_ptr<Point> BandwidthBenchmark::prepare(cudaStream_t stream) {
  BandwidthRecord r = current();
  if (!buffers_) buffers_ = std::make_unique<Buffers>(static_cast<size_t>(r.bytes), stream);
  return std::make_unique<BandwidthPoint>(*this, std::move(r), stream);
}

std::string BandwidthBenchmark::failed(const WorkError& error, bool) {
  BandwidthRecord r = current();
  r.error = error.what();
  run_.emit(r);
  results_.push_back(r);
  return fmt::format("{:>5} {:>10} bytes: {}", r.op, r.bytes, r.error);
}

}  // namespace ub::measure
