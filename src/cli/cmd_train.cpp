// `upgradebench train`: one training step of a Llama-family model (our engine: cuBLASLt GEMMs,
// cuDNN attention, our kernels, AdamW), repeated (measure/train.hpp); like the ml-engineering
// guide's benchmark.py it prints one JSON record per step on stdout after the context record, and
// appends the same records to --out. A length that does not fit becomes a train_oom record and
// exit code 3.
//
// On several GPUs it is data parallel (gpu/model/data_parallel.hpp): one process per GPU, started
// by torchrun --no-python, srun or mpirun, or by `--gpus N` on one host, each rank training its own
// sequences with the gradients averaged and ZeRO's stage (--zero) sharding what each keeps; rank 0
// writes the records. One GPU with --zero or --offload-optimizer runs the same way as a job of one.
#include <fmt/format.h>

#include <cstdio>
#include <thread>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/gpu_binary.hpp"
#include "cli/measuring_shell.hpp"
#include "cli/train_options.hpp"
#include "records/train_records.hpp"

#ifdef UB_HAVE_CUDA
#include "analysis/decompose/kernel_classes.hpp"
#include "cli/gpu_job.hpp"
#include "cli/gpu_workers.hpp"
#include "measure/train.hpp"
#endif

namespace ub::cli {

namespace {

struct TrainCommand {
  TrainOptions train;
  ShellOptions shell;
};

#ifdef UB_HAVE_CUDA
void print_record(const nlohmann::json& rec) {
  std::fputs((rec.dump() + "\n").c_str(), stdout);
  std::fflush(stdout);
}

// Ends a run by its summary: exit 3 when the step did not fit, an error when it failed.
void finish(Context& ctx, const measure::TrainSummary& sum, GpuRun* run) {
  if (sum.oom) {
    ctx.exit_code = kExitOutOfMemory;
    return;
  }
  if (!sum.ok) throw WorkError(fmt::format("train: {}", sum.error));
  if (run) run->progress.line(fmt::format("records: {}", run->writer->path().string()));
}

// The steps on one device (a rank's, with its communicator, or one GPU's alone): the catalog's
// peak for MFU, the kernel classes a breakdown names, the benchmark run through the driver.
measure::TrainSummary measure_train(Context& ctx, TrainConfig cfg, measure::DeviceRun& d, gpu::NcclComm* comm) {
  const Accelerator* gpu = catalog_entry(ctx, d.device_name);
  if (gpu) cfg.peak_tflops = gpu->peak(Dtype::bf16).get();
  trace::KernelClasses classes;
  if (cfg.breakdown) classes.add_file(ctx.data_dir() / "kernel_classes.json", false);
  measure::TrainBenchmark b(cfg, d, &classes, gpu, comm);
  measure::run_benchmark(b, d);
  return b.summary();
}

// This process as one rank of a data-parallel job (a job of one without a launcher).
void run_ranks(Context& ctx, const TrainCommand& c, TrainConfig cfg) {
  const auto configure = [&cfg](const GpuJob& job) {
    cfg.world = job.launch.world_size;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const unsigned ranks_here = static_cast<unsigned>(std::max(1, job.launch.local_world_size));
    cfg.host_threads = static_cast<int>(std::max(1u, cores / ranks_here));
    return nlohmann::json(cfg);
  };
  run_job(ctx, "train", c.train.job, c.shell.out, configure, [&](RankRun& r) {
    if (r.run) {
      print_record(r.run->context);
      r.device.echo = print_record;
    }
    finish(ctx, measure_train(ctx, cfg, r.device, r.job.comm.get()), r.run);
  });
}

void run(Context& ctx, const TrainCommand& c) {
  const TrainConfig cfg = train_config(ctx, c.train);  // bad input is refused before a GPU is touched
  const dist::Launch launch = dist::launch_from(dist::launch_environment());
  if (!c.train.job.gpus.empty() || launch.world_size > 1 || cfg.zero > 0 || cfg.offload_optimizer) {
    if (c.train.device != 0) {
      throw UsageError("--device is for one GPU: the ranks of a job take their GPU by local rank");
    }
    return run_ranks(ctx, c, cfg);
  }
  auto run = start_gpu_run(ctx, "train", std::to_string(c.train.device), c.shell.out, cfg);
  print_record(run->context);
  measure::TrainSummary sum;
  for_each_device(*run, [&](measure::DeviceRun& d) {
    d.echo = print_record;
    sum = measure_train(ctx, cfg, d, nullptr);
  });
  finish(ctx, sum, run.get());
  finish_measurement(ctx, "train", run->counts, run->interrupted->load(), run->writer->path().string());
}
#else
void run(Context& ctx, const TrainCommand& c) {
  (void)train_config(ctx, c.train);
  run_in_gpu_binary(ctx, "train");
}
#endif

}  // namespace

void register_train(CLI::App& app, Context& ctx) {
  auto c = std::make_shared<TrainCommand>();
  auto* cmd = app.add_subcommand("train", "Time training steps (forward, backward, AdamW) of a Llama-family model "
                                          "on our engine; one JSON record per step");
  c->train.add_to(*cmd, {});
  add_shell_options(*cmd, ctx, c->shell, "train", {.output = false});
  cmd->callback([&ctx, c] { run(ctx, *c); });
}

}  // namespace ub::cli
