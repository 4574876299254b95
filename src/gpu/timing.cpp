// The timing protocol; see timing.hpp.
#include "gpu/timing.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>

namespace ub::gpu {

L2Flusher::L2Flusher(size_t l2_bytes)
    : buffer_(std::max<size_t>(size_t{256} << 20, 2 * l2_bytes)) {}

void L2Flusher::flush(cudaStream_t s) const {
  UB_CUDA_CHECK(cudaMemsetAsync(buffer_.get(), 0, buffer_.bytes(), s));
}

void warm_up(cudaStream_t s, const Work& work, double seconds) {
  using clock = std::chrono::steady_clock;
  const auto end = clock::now() + std::chrono::duration<double>(seconds);
  do {
    for (int i = 0; i < 10; ++i) work(s);
    UB_CUDA_CHECK(cudaStreamSynchronize(s));
  } while (clock::now() < end);
}

Timing time_samples(cudaStream_t s, const Work& prepare, const Work& work, const TimingPolicy& p,
                    const std::atomic<bool>* interrupted, const SampleHook& on_sample, const Agreement& agree) {
  using clock = std::chrono::steady_clock;
  const auto start_wall = clock::now();
  const int batch = std::max(1, p.batch);
  const int discard = std::max(0, p.discard);
  std::vector<Event> starts(static_cast<size_t>(batch)), ends(static_cast<size_t>(batch));
  Timing t;
  std::vector<double> kept;
  double gpu_seconds = 0;
  while (true) {
    const int remaining = discard + p.max_samples - static_cast<int>(t.ms.size());
    const int n = std::min(batch, remaining);
    for (int i = 0; i < n; ++i) {
      if (prepare) prepare(s);
      starts[static_cast<size_t>(i)].record(s);
      work(s);
      ends[static_cast<size_t>(i)].record(s);
    }
    UB_CUDA_CHECK(cudaGetLastError());
    UB_CUDA_CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < n; ++i) {
      const double ms = ends[static_cast<size_t>(i)].since(starts[static_cast<size_t>(i)]);
      if (on_sample) on_sample(static_cast<int>(t.ms.size()), ms);
      if (static_cast<int>(t.ms.size()) >= discard) {
        kept.push_back(ms);
        gpu_seconds += ms / 1e3;
      }
      t.ms.push_back(ms);
    }
    if (!kept.empty()) t.summary = summarize(kept);
    const int count = static_cast<int>(kept.size());
    const double wall = std::chrono::duration<double>(clock::now() - start_wall).count();
    const bool enough = count >= p.min_samples && gpu_seconds >= p.min_seconds;
    std::string reason;
    if (interrupted && interrupted->load()) reason = "interrupted";
    else if (enough && t.summary.relative_noise() <= p.target_noise) reason = "noise";
    else if (count >= p.max_samples) reason = "max_samples";
    else if (wall >= p.max_seconds && count >= std::min(p.min_samples, 3)) reason = "max_seconds";
    const bool stop = agree ? agree(!reason.empty()) : !reason.empty();
    if (stop) {
      t.stop_reason = reason.empty() ? "another rank" : reason;
      break;
    }
  }
  return t;
}

}  // namespace ub::gpu
