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

#include "analysis/decompose/kernel_classes.hpp"
#include "base/error.hpp"
#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/gpu_binary.hpp"
#include "cli/run_inputs.hpp"
#include "cli/train_options.hpp"
#include "records/train_records.hpp"

#ifdef UB_HAVE_CUDA
#include "cli/gpu_job.hpp"
#include "cli/gpu_workers.hpp"
#include "cli/interrupt.hpp"
#include "dist/fault.hpp"
#include "measure/train.hpp"
#endif

namespace ub::cli {

namespace {

struct TrainCommand {
  TrainOptions train;
  bool breakdown = false;
  int profile_steps = 3;
};

#ifdef UB_HAVE_CUDA
void print_record(const nlohmann::json& rec) {
  std::fputs((rec.dump() + "\n").c_str(), stdout);
  std::fflush(stdout);
}

// Ends a run by its summary: exit 3 when the step did not fit, an error when it failed, 130
// when interrupted.
void finish(Context& ctx, const measure::TrainSummary& sum, GpuRun* run) {
  if (sum.oom) {
    ctx.exit_code = kExitOutOfMemory;
    return;
  }
  if (!sum.ok) throw WorkError(fmt::format("train: {}", sum.error));
  if (run) {
    run->progress.line(fmt::format("records: {}", run->writer->path().string()));
    if (run->interrupted->load()) ctx.exit_code = kExitInterrupted;
  }
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
void run_rank(Context& ctx, const TrainCommand& c, TrainConfig cfg) {
  auto job = join_gpu_job(c.train.rendezvous_timeout_s);
  try {
    cfg.world = job->launch.world_size;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    cfg.host_threads = static_cast<int>(std::max(1u, cores / static_cast<unsigned>(std::max(1, job->launch.local_world_size))));
    std::unique_ptr<GpuRun> run;
    if (job->leader()) {
      run = start_gpu_run(ctx, "train", std::to_string(job->device), c.train.out, cfg, nlohmann::json(job->world));
      print_record(run->context);
    }
    measure::DeviceRun d = measure::open_device_run(job->device, run ? run->writer.get() : nullptr,
                                                    run ? &run->progress : nullptr, &install_interrupt_handler());
    d.agree = [&job](bool stop) { return job->comm->any_rank(stop); };
    if (run) d.echo = print_record;
    dist::fault_point("measure", job->launch.rank);
    finish(ctx, measure_train(ctx, cfg, d, job->comm.get()), run.get());
  } catch (const std::exception& e) {
    job->fail(e.what());
  }
}
#endif

void run(Context& ctx, const TrainCommand& c) {
  const TrainOptions& o = c.train;
  TrainConfig cfg = train_config(ctx, o);
  cfg.breakdown = c.breakdown;
  cfg.profile_steps = c.profile_steps;
  cfg.validate();  // bad input is refused before a GPU is touched
#ifdef UB_HAVE_CUDA
  const dist::Launch launch = dist::launch_from(dist::launch_environment());
  if (!o.gpus.empty()) {
    if (launch.launcher != "none") throw UsageError(fmt::format("--gpus is for a run without a launcher (this is {})", launch.launcher));
    ctx.exit_code = run_local_ranks(o.gpus, ctx.argv);
    return;
  }
  if (launch.world_size > 1 || cfg.zero > 0 || cfg.offload_optimizer) {
    if (o.device != 0) throw UsageError("--device is for one GPU: the ranks of a job take their GPU by local rank");
    return run_rank(ctx, c, cfg);
  }
  auto run = start_gpu_run(ctx, "train", std::to_string(o.device), o.out, cfg);
  print_record(run->context);
  measure::TrainSummary sum;
  for_each_device(*run, [&](measure::DeviceRun& d) {
    d.echo = print_record;
    sum = measure_train(ctx, cfg, d, nullptr);
  });
  finish(ctx, sum, run.get());
#else
  run_in_gpu_binary(ctx, "train");
#endif
}

}  // namespace

void register_train(CLI::App& app, Context& ctx) {
  auto c = std::make_shared<TrainCommand>();
  auto* cmd = app.add_subcommand("train", "Time training steps (forward, backward, AdamW) of a Llama-family model "
                                          "on our engine; one JSON record per step");
  add_workload_options(*cmd, c->train);
  add_engine_options(*cmd, c->train);
  add_parallel_options(*cmd, c->train);
  cmd->add_flag("--breakdown", c->breakdown,
                "After the timed steps, profile more under CUPTI: time per kernel class and operation of the median "
                "one (train_breakdown record) and the step's decomposition (decomposition record)");
  cmd->add_option("--profile-steps", c->profile_steps, "How many steps --breakdown profiles")->capture_default_str();
  cmd->add_option("--out", c->train.out, "Records file (JSON lines, appended; default upgradebench-train-<date>.jsonl)");
  add_record_db_flag(*cmd, ctx);
  cmd->callback([&ctx, c] { run(ctx, *c); });
}

}  // namespace ub::cli
