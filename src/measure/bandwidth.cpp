// The bandwidth driver; see bandwidth.hpp.
#include "measure/bandwidth.hpp"

#include <fmt/format.h>

#include "gpu/kernels/bandwidth.cuh"
#include "gpu/telemetry_sampler.hpp"
#include "gpu/timing.hpp"

namespace ub::measure {

using nlohmann::json;

json BandwidthConfig::to_json() const {
  return {{"sizes", sizes}, {"ops", ops}, {"kernel", kernel}, {"warmup_s", warmup_s}, {"min_samples", min_samples},
          {"max_samples", max_samples}, {"max_seconds", max_seconds},
          {"target_noise", target_noise}};
}

std::vector<BandwidthPoint> run_bandwidth(const BandwidthConfig& cfg, DeviceRun& run) {
  for (const std::string& op : cfg.ops) {
    if (op != "copy" && op != "read" && op != "write") {
      throw UsageError(fmt::format("--ops: unknown operation '{}' (copy, read, write)", op));
    }
  }
  const gpu::BandwidthKernel kernel = gpu::parse_bandwidth_kernel(cfg.kernel);
  gpu::Stream stream;
  const cudaStream_t st = stream.get();
  gpu::DeviceBuffer scratch(sizeof(unsigned long long));
  std::vector<BandwidthPoint> out;
  bool warmed = false;
  for (int64_t size : cfg.sizes) {
    const size_t bytes = static_cast<size_t>(size) / 64 * 64;
    if (bytes == 0) throw UsageError(fmt::format("--sizes: {} bytes is too small (64 at least)", size));
    if (bytes > (size_t{16} << 30)) {
      throw UsageError(fmt::format("--sizes: {} bytes is beyond the 16 GiB the checks support", size));
    }
    gpu::DeviceBuffer src(bytes);
    gpu::DeviceBuffer dst(bytes);
    gpu::fill_word_index(src.get(), bytes, st);
    if (!warmed) {
      gpu::warm_up(st, [&](cudaStream_t s) { gpu::bandwidth_copy(dst.get(), src.get(), bytes, kernel, s); },
                   cfg.warmup_s);
      warmed = true;
    }
    for (const std::string& op : cfg.ops) {
      if (run.stop_requested()) return out;
      BandwidthPoint p;
      p.op = op;
      p.bytes = static_cast<int64_t>(bytes);
      p.bytes_moved = op == "copy" ? 2.0 * static_cast<double>(bytes) : static_cast<double>(bytes);
      p.in_l2 = (op == "copy" ? 2 * bytes : bytes) <= run.l2_bytes;
      gpu::Work work;
      // Validate first: the timed kernel must have done the whole job.
      unsigned long long wrong = 0;
      if (op == "copy") {
        UB_CUDA_CHECK(cudaMemsetAsync(dst.get(), 0xFF, bytes, st));
        work = [&](cudaStream_t s) { gpu::bandwidth_copy(dst.get(), src.get(), bytes, kernel, s); };
        work(st);
        gpu::count_mismatches(dst.get(), bytes, true, 0, scratch.as<unsigned long long>(), st);
      } else if (op == "write") {
        work = [&](cudaStream_t s) { gpu::bandwidth_write(dst.get(), bytes, 0xA5A5A5A5u, kernel, s); };
        work(st);
        gpu::count_mismatches(dst.get(), bytes, false, 0xA5A5A5A5u, scratch.as<unsigned long long>(), st);
      } else {
        auto* sum = scratch.as<unsigned long long>();
        work = [&, sum](cudaStream_t s) { gpu::bandwidth_read(src.get(), bytes, sum, kernel, s); };
        UB_CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(unsigned long long), st));
        work(st);
        unsigned long long got = 0;
        UB_CUDA_CHECK(cudaMemcpyAsync(&got, sum, sizeof got, cudaMemcpyDeviceToHost, st));
        UB_CUDA_CHECK(cudaStreamSynchronize(st));
        wrong = got != gpu::sum_of_word_indices(bytes / 4);
      }
      if (op != "read") {
        UB_CUDA_CHECK(cudaMemcpyAsync(&wrong, scratch.get(), sizeof wrong, cudaMemcpyDeviceToHost, st));
        UB_CUDA_CHECK(cudaStreamSynchronize(st));
      }
      json rec = {{"type", "bandwidth"}, {"device", run.device}, {"op", op}, {"kernel", cfg.kernel},
                  {"bytes", bytes},      {"bytes_moved", p.bytes_moved}, {"in_l2", p.in_l2}};
      if (wrong) {
        p.error = op == "read" ? std::string("validation failed: the sum of the words read is wrong")
                               : fmt::format("validation failed: {} words wrong", wrong);
        rec["error"] = p.error;
      } else {
        gpu::TimingPolicy pol;
        pol.min_samples = cfg.min_samples;
        pol.max_samples = cfg.max_samples;
        pol.max_seconds = cfg.max_seconds;
        pol.target_noise = cfg.target_noise;
        gpu::TelemetrySampler sampler(run.nvml.get());
        sampler.start();
        const gpu::Timing t = gpu::time_samples(st, {}, work, pol, run.interrupted);
        const TelemetrySummary tel = sampler.stop();
        p.ok = true;
        p.median_gbps = p.bytes_moved / (t.summary.median * 1e-3) / 1e9;
        p.mean_gbps = p.bytes_moved / (t.summary.mean * 1e-3) / 1e9;
        p.max_gbps = p.bytes_moved / (t.summary.min * 1e-3) / 1e9;
        rec["gbps"] = {{"median", p.median_gbps}, {"mean", p.mean_gbps}, {"max", p.max_gbps}};
        rec["time_ms"] = {{"median", t.summary.median}, {"mean", t.summary.mean},
                          {"min", t.summary.min}, {"max", t.summary.max}, {"n", t.summary.n},
                          {"median_low", t.summary.median_low}, {"median_high", t.summary.median_high}};
        rec["stop"] = t.stop_reason;
        rec["telemetry"] = tel.to_json();
        rec["check"] = "ok";
      }
      if (run.writer) run.writer->write(rec);
      if (run.progress) {
        run.progress->line(p.ok ? fmt::format("{:>5} {:>10} bytes: {:8.1f} GB/s{}", op, bytes,
                                                  p.median_gbps, p.in_l2 ? " (in L2)" : "")
                                    : fmt::format("{:>5} {:>10} bytes: {}", op, bytes, p.error));
      }
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace ub::measure
