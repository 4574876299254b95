// The benchmark driver; the loop is stated in driver.hpp.
#include "measure/driver.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <chrono>

#include "base/error.hpp"
#include "gpu/cuda_raii.hpp"
#include "gpu/device_arena.hpp"
#include "gpu/telemetry_sampler.hpp"

namespace ub::measure {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Times every unit of `p`; telemetry over all of them, or per sample where a unit asks.
Measured time_units(Point& p, const Benchmark& b, const DeviceRun& run, cudaStream_t stream) {
  Measured m;
  gpu::TelemetrySampler whole(run.nvml.get());
  whole.start();
  const std::vector<TimedUnit> units = p.units();
  for (size_t u = 0; u < units.size(); ++u) {
    const TimedUnit& unit = units[u];
    const TimingPolicy policy = unit.policy.value_or(b.timing().samples);
    gpu::TelemetrySampler each(run.nvml.get());
    gpu::Work prepare = unit.prepare;
    if (unit.telemetry_per_sample) {
      prepare = [&](cudaStream_t s) {
        if (unit.prepare) unit.prepare(s);
        each.start();
      };
    }
    const gpu::SampleHook hook = [&](int index, double ms) {
      if (!unit.telemetry_per_sample) return p.sampled(u, index, ms, nullptr);
      const TelemetrySummary t = each.stop();
      p.sampled(u, index, ms, &t);
    };
    m.timings.push_back(gpu::time_samples(stream, prepare, unit.work, policy, run.interrupted, hook, run.agree));
    if (run.stop_agreed()) break;
  }
  m.telemetry = whole.stop();
  return m;
}

}  // namespace

void Benchmark::warm_up(Point& first, cudaStream_t stream) {
  const std::vector<TimedUnit> units = first.units();
  if (units.empty() || timing_.warmup_s <= 0) return;
  gpu::warm_up(stream, units.front().work, timing_.warmup_s);
}

PointCounts run_benchmark(Benchmark& b, DeviceRun& run) {
  PointCounts counts;
  gpu::Stream stream;
  bool warmed = false;
  while (!run.stop_agreed() && b.next()) {
    run.status(fmt::format("GPU {}: {} ...", run.device, b.label()));
    const auto started = Clock::now();
    std::string line;
    try {
      std::unique_ptr<Point> p = b.prepare(stream.get());
      Measured m;
      // Correct first: a timing of a wrong result is not a measurement.
      if (auto wrong = p->check()) {
        m.error = *wrong;
        ++counts.wrong;
      } else {
        if (!warmed) {
          b.warm_up(*p, stream.get());
          warmed = true;
        }
        p->tune(run.interrupted);
        m = time_units(*p, b, run, stream.get());
        ++counts.measured;
      }
      m.interrupted = run.stop_requested();
      m.elapsed_s = seconds_since(started);
      line = p->record(m);
    } catch (const WorkError& e) {
      const bool oom = dynamic_cast<const gpu::OutOfMemory*>(&e) != nullptr || gpu::is_out_of_memory_message(e.what());
      (void)cudaGetLastError();  // an allocation failure is not sticky; clear it
      line = b.failed(e, oom);
      ++(oom ? counts.out_of_memory : counts.failed);
    }
    if (run.writer) run.writer->sync();
    if (!line.empty()) run.say(line);
  }
  b.finish();
  if (run.writer) run.writer->sync();
  run.counts += counts;
  return counts;
}

}  // namespace ub::measure
