// Shared plumbing of the GPU commands: the records file (context record first), one worker
// thread per GPU (`--devices all`: GPUs of one node are measured at the same time, since they
// differ by 5% or more), and Ctrl-C. Only compiled with CUDA.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/session.hpp"
#include "cli/context.hpp"

namespace ub::cli {

struct GpuRun {
  std::vector<int> devices;
  std::unique_ptr<RecordWriter> writer;
  report::Progress progress;
  const std::atomic<bool>* interrupted = nullptr;
};

// Resolves --devices, opens the records file (`out`, or upgradebench-<cmd>-<date>.jsonl) and
// writes the context record with the fingerprint of the chosen GPUs and `config`.
std::unique_ptr<GpuRun> start_gpu_run(Context& ctx, const std::string& command,
                                      const std::string& devices, const std::string& out,
                                      const nlohmann::json& config);

// Runs `work` on every device of the run, one thread each; rethrows the first failure.
void for_each_device(GpuRun& run, const std::function<void(bench::Session&)>& work);

// The catalog entry for a device's reported name, or null (an unknown GPU is N/A, not an error).
const Accelerator* catalog_entry(Context& ctx, const std::string& device_name);

}  // namespace ub::cli
