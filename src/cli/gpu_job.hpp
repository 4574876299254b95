// One rank of a job of GPUs, however it was started (dist/launch.hpp): the launch read from the
// launcher's variables, the rendezvous with the other ranks, this rank's GPU (its local rank) and
// the NCCL communicator. A failure anywhere ends every rank within seconds: the job's watchdog and
// NCCL's asynchronous errors both land in one handler that prints which rank failed first and
// why, aborts the communicator and exits with code 1. Records already written stay on disk.
// Only compiled with CUDA.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "cli/context.hpp"
#include "cli/measuring_shell.hpp"
#include "dist/launch.hpp"
#include "dist/rendezvous.hpp"
#include "gpu/nccl_comm.hpp"
#include "measure/device_run.hpp"
#include "records/nccl_records.hpp"

namespace ub::cli {

struct GpuJob {
  dist::Launch launch;
  int device = 0;
  std::unique_ptr<dist::Rendezvous> rendezvous;
  std::unique_ptr<gpu::NcclComm> comm;
  WorldFacts world;  // what every rank said, with rank 0's host topology

  bool leader() const { return launch.rank == 0; }
  // Ends the job from this rank: every rank is told, this one exits 1.
  [[noreturn]] void fail(const std::string& reason);
};

// Joins the job this process is a rank of (a world of one without a launcher).
std::unique_ptr<GpuJob> join_gpu_job(double rendezvous_timeout_s);

// `--gpus N` (or `all`) without a launcher: runs this command line as N ranks on this host and
// returns the exit code for this process (the first failed rank's, named on stderr).
int run_local_ranks(const std::string& gpus, const std::vector<std::string>& argv);

struct GpuRun;

// What one rank of a job measures with: the job, its GPU (the driver's DeviceRun, agreeing with
// the other ranks on when to stop) and, on the leader (rank 0), the records of the run.
struct RankRun {
  GpuJob& job;
  measure::DeviceRun& device;
  GpuRun* run;  // null on the other ranks
};

// The measuring shell for a command that runs as a job (cli/measuring_shell.hpp): with --gpus,
// starts the ranks on this host and ends with their exit code; otherwise joins the job, lets
// `configure` complete the configuration from it (its world, host threads), opens the leader's
// records (the context record naming the world) and runs `work` on this rank's GPU. An exception
// on any rank ends every rank; a rank other than the leader whose points failed their check exits
// 1 (the leader says why).
void run_job(Context& ctx, const std::string& command, const JobOptions& o, const std::string& out,
             const std::function<nlohmann::json(const GpuJob&)>& configure,
             const std::function<void(RankRun&)>& work);

}  // namespace ub::cli
