// Which rank of which job this process is, read from the launcher that started it, so the same
// binary runs as one rank under the launchers people already use:
//
//   torchrun --no-python   RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
//                          MASTER_ADDR, MASTER_PORT
//   srun                   SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID, SLURM_NNODES
//                          (or SLURM_NTASKS_PER_NODE); the master address from MASTER_ADDR or the
//                          first host of SLURM_JOB_NODELIST, the port from MASTER_PORT or 29500
//   mpirun (Open MPI)      OMPI_COMM_WORLD_RANK / SIZE / LOCAL_RANK / LOCAL_SIZE /
//                          NODE_RANK; MASTER_ADDR (on one node, 127.0.0.1 when unset)
//   upgradebench --gpus N  the same variables as torchrun, set by the parent for its children
//
// Every launcher also passes UPGRADEBENCH_JOB_SECRET, the same text on every rank of a job (16
// characters or more; --gpus N makes a random one): the rendezvous lets in only the ranks that
// know it (rendezvous.hpp).
//
// No launcher (none of these set) is a job of one rank. Plain C++: tested on any machine.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace ub::dist {

struct Launch {
  std::string launcher = "none";  // torchrun, slurm, openmpi, none
  int rank = 0, world_size = 1;
  int local_rank = 0, local_world_size = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string secret;  // UPGRADEBENCH_JOB_SECRET: what a rank shows the rendezvous
};

inline constexpr const char* kJobSecretVariable = "UPGRADEBENCH_JOB_SECRET";
inline constexpr size_t kMinJobSecretChars = 16;

using Environment = std::map<std::string, std::string>;

// The launch described by `env`; UsageError naming the variable when one is missing or wrong
// (a rank outside the world, a port that is not one).
Launch launch_from(const Environment& env);
// This process's environment, the variables above only.
Environment launch_environment();

// The first host of a Slurm node list: "gpu[07-09,12],login1" -> "gpu07". UsageError when it is
// not a node list.
std::string first_slurm_host(const std::string& nodelist);

}  // namespace ub::dist
