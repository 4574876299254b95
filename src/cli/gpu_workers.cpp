// GPU command plumbing; see gpu_workers.hpp.
#include "cli/gpu_workers.hpp"

#include <fmt/format.h>

#include <exception>
#include <mutex>
#include <thread>

#include "base/error.hpp"
#include "cli/arguments.hpp"
#include "cli/fatbin_architectures.hpp"
#include "cli/interrupt.hpp"
#include "gpu/device.hpp"
#include "gpu/fingerprint.hpp"
#include "gpu/nvml.hpp"

namespace ub::cli {

Fingerprint machine_fingerprint(Context& ctx, const std::vector<int>& devices) {
  std::string why;
  auto nvml = gpu::Nvml::open(&why);
  Fingerprint fp = gpu::gather_fingerprint(devices, nvml.get());
  for (GpuFacts& g : fp.gpus) {
    if (const Accelerator* a = catalog_entry(ctx, g.name)) g.catalog_id = a->id;
  }
  if (!nvml) fp.nvml = why;
  return fp;
}

std::unique_ptr<GpuRun> start_gpu_run(Context& ctx, const std::string& command, const std::string& devices,
                                      const std::string& out, const nlohmann::json& config, const nlohmann::json& world) {
  const gpu::DeviceList list = gpu::list_devices();
  if (list.devices.empty()) throw WorkError(fmt::format("{}: {}", command, list.why_none));
  auto run = std::make_unique<GpuRun>();
  run->command = command;
  run->devices = parse_devices(devices, static_cast<int>(list.devices.size()));
  for (const int i : run->devices) {  // before the first launch: code for each GPU, or which build option adds it
    const gpu::DeviceInfo& d = list.devices[static_cast<size_t>(i)];
    check_runs_on(own_architectures(), d.cc_major * 10 + d.cc_minor, fmt::format("{}: GPU {} ({})", command, i, d.name));
  }
  const std::string path = records_path(command, out);
  run->context = make_context(command, ctx.argv, machine_fingerprint(ctx, run->devices), config);
  run->context.world = world;
  run->writer = open_records(ctx, path, run->context);
  run->progress.line(fmt::format("records: {}", path));
  run->interrupted = &install_interrupt_handler();
  return run;
}

void for_each_device(GpuRun& run, const std::function<void(measure::DeviceRun&)>& work) {
  std::vector<std::thread> threads;
  std::exception_ptr first;
  std::mutex m;
  for (int d : run.devices) {
    threads.emplace_back([&, d] {
      try {
        measure::DeviceRun s = measure::open_device_run(d, run.writer.get(), &run.progress, run.interrupted);
        work(s);
        std::lock_guard lock(m);
        run.counts += s.counts;
      } catch (...) {
        std::lock_guard lock(m);
        if (!first) first = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

void GpuRun::emit(report::View view, const OutputOptions& out) const {
  if (view.doc.blocks.empty()) view.doc.add();
  view.doc.blocks.back().notes.push_back(fmt::format("records: {}", writer->path().string()));
  out.emit(view.doc, view.json);
}

void finish_gpu_run(Context& ctx, const GpuRun& run, report::View view, const OutputOptions& out) {
  run.emit(std::move(view), out);
  finish_measurement(ctx, run.command, run.counts, run.interrupted->load(), run.writer->path().string());
}

const Accelerator* catalog_entry(Context& ctx, const std::string& device_name) {
  return ctx.catalog().try_find(device_name);
}

}  // namespace ub::cli
