// Shared plumbing of the GPU commands: the records file (context record first), one worker
// thread per GPU (`--devices all`: GPUs of one node are measured at the same time, since they
// differ by 5% or more), and Ctrl-C. Only compiled with CUDA.
#pragma once

#include <algorithm>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "cli/context.hpp"
#include "cli/output.hpp"
#include "measure/device_run.hpp"
#include "records/context_record.hpp"

namespace ub::cli {

struct GpuRun {
  std::vector<int> devices;
  std::unique_ptr<RecordWriter> writer;
  Progress progress;
  const std::atomic<bool>* interrupted = nullptr;
  ContextRecord context;  // the context record written first
};

// The fingerprint of this machine's GPUs (`devices`, all when empty) with each GPU's catalog id.
Fingerprint machine_fingerprint(Context& ctx, const std::vector<int>& devices);

// Resolves --devices, opens the records file (`out`, or upgradebench-<cmd>-<date>.jsonl) and
// writes the context record with the fingerprint of the chosen GPUs, `config` and, for a job of
// several ranks, its `world` (records/nccl_records.hpp's WorldFacts).
std::unique_ptr<GpuRun> start_gpu_run(Context& ctx, const std::string& command, const std::string& devices,
                                      const std::string& out, const nlohmann::json& config,
                                      const nlohmann::json& world = nullptr);

// Runs `work` on every device of the run, one thread each; rethrows the first failure.
void for_each_device(GpuRun& run, const std::function<void(measure::DeviceRun&)>& work);

// for_each_device, collecting each device's result with its run, in device order.
template <class Result>
std::vector<std::pair<measure::DeviceRun, Result>> measure_each_device(
    GpuRun& run, const std::function<Result(measure::DeviceRun&)>& measure) {
  std::mutex m;
  std::vector<std::pair<measure::DeviceRun, Result>> results;
  for_each_device(run, [&](measure::DeviceRun& d) {
    Result r = measure(d);
    std::lock_guard lock(m);
    results.emplace_back(d, std::move(r));
  });
  std::sort(results.begin(), results.end(), [](const auto& a, const auto& b) { return a.first.device < b.first.device; });
  return results;
}

// What a GPU command ends with: the records path under the last block, the output in the chosen
// format, and exit code 130 when Ctrl-C stopped the run.
void finish_gpu_run(Context& ctx, const GpuRun& run, report::Document& doc, const nlohmann::json& json,
                    const OutputOptions& out);

// The catalog entry for a device's reported name, or null (an unknown GPU is N/A, not an error).
const Accelerator* catalog_entry(Context& ctx, const std::string& device_name);

}  // namespace ub::cli
