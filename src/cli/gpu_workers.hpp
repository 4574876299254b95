// The GPU half of the measuring commands' shell (cli/measuring_shell.hpp): the records file of a
// run on this machine's GPUs (context record first, with their fingerprint), one worker thread
// per GPU (`--devices all`: GPUs of one node are measured at the same time, since they differ by
// 5% or more), the count of what their points came to, Ctrl-C, and the end. Only compiled with
// CUDA.
#pragma once

#include <algorithm>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "cli/context.hpp"
#include "cli/measuring_shell.hpp"
#include "measure/device_run.hpp"
#include "records/context_record.hpp"
#include "report/measurement_views.hpp"

namespace ub::cli {

struct GpuRun {
  std::string command;
  std::vector<int> devices;
  std::unique_ptr<RecordWriter> writer;
  Progress progress;
  const std::atomic<bool>* interrupted = nullptr;
  ContextRecord context;  // the context record written first
  PointCounts counts;     // over every device, once for_each_device returned

  // Writes `view` in the chosen format with the records' path under its last block.
  void emit(report::View view, const OutputOptions& out) const;
};

// The fingerprint of this machine's GPUs (`devices`, all when empty) with each GPU's catalog id.
Fingerprint machine_fingerprint(Context& ctx, const std::vector<int>& devices);

// Resolves --devices, opens the records file (`out`, or upgradebench-<cmd>-<date>.jsonl, with the
// history sink of --db) and writes the context record with the fingerprint of the chosen GPUs,
// `config` and, for a job of several ranks, its `world` (records/nccl_records.hpp's WorldFacts).
std::unique_ptr<GpuRun> start_gpu_run(Context& ctx, const std::string& command, const std::string& devices,
                                      const std::string& out, const nlohmann::json& config,
                                      const nlohmann::json& world = nullptr);

// Runs `work` on every device of the run, one thread each, adding what each device's points came
// to into run.counts; rethrows the first failure.
void for_each_device(GpuRun& run, const std::function<void(measure::DeviceRun&)>& work);

// for_each_device, collecting each device's result, in device order.
template <class Result>
std::vector<report::OnGpu<Result>> measure_each_device(GpuRun& run,
                                                       const std::function<Result(measure::DeviceRun&)>& measure) {
  std::mutex m;
  std::vector<report::OnGpu<Result>> results;
  for_each_device(run, [&](measure::DeviceRun& d) {
    Result r = measure(d);
    std::lock_guard lock(m);
    results.push_back({d.device, d.device_name, std::move(r)});
  });
  std::sort(results.begin(), results.end(), [](const auto& a, const auto& b) { return a.device < b.device; });
  return results;
}

// What a GPU command ends with: run.emit(view), then finish_measurement (exit 130 when
// interrupted, 1 when a point failed its check).
void finish_gpu_run(Context& ctx, const GpuRun& run, report::View view, const OutputOptions& out);

// The catalog entry for a device's reported name, or null (an unknown GPU is N/A, not an error).
const Accelerator* catalog_entry(Context& ctx, const std::string& device_name);

}  // namespace ub::cli
