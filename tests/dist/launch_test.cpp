// The launchers' variables read into one Launch: torchrun, srun, mpirun, none; errors name the
// variable.
#include "dist/launch.hpp"

#include <gtest/gtest.h>

#include "base/error.hpp"
#include "dist/spawn.hpp"

namespace ub::dist {
namespace {

std::string usage_error(const Environment& env) {
  try {
    launch_from(env);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Launch, NoLauncherIsAWorldOfOne) {
  const Launch l = launch_from({});
  EXPECT_EQ(l.launcher, "none");
  EXPECT_EQ(l.world_size, 1);
  EXPECT_EQ(l.rank, 0);
}

TEST(Launch, Torchrun) {
  const Launch l = launch_from({{"RANK", "5"}, {"WORLD_SIZE", "16"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "8"},
                                {"GROUP_RANK", "0"}, {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29501"}});
  EXPECT_EQ(l.launcher, "torchrun");
  EXPECT_EQ(l.rank, 5);
  EXPECT_EQ(l.world_size, 16);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.local_world_size, 8);
  EXPECT_EQ(l.master_addr, "node7");
  EXPECT_EQ(l.master_port, 29501);
  EXPECT_NE(usage_error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}}).find("MASTER_ADDR is not set"),
            std::string::npos);
  EXPECT_NE(usage_error({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}})
                .find("rank 2 is outside a world of 2"),
            std::string::npos);
  EXPECT_NE(usage_error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "99999"}})
                .find("MASTER_PORT=99999"),
            std::string::npos);
}

TEST(Launch, SlurmWithTheMasterFromTheNodeList) {
  const Launch l = launch_from({{"SLURM_PROCID", "9"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "1"},
                                {"SLURM_NODEID", "1"}, {"SLURM_NTASKS_PER_NODE", "8(x2)"},
                                {"SLURM_JOB_NODELIST", "gpu[007-008],login1"}});
  EXPECT_EQ(l.launcher, "slurm");
  EXPECT_EQ(l.rank, 9);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.local_world_size, 8);
  EXPECT_EQ(l.node_rank, 1);
  EXPECT_EQ(l.master_addr, "gpu007");
  EXPECT_EQ(l.master_port, 29500);
  const Launch m = launch_from({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_NNODES", "2"},
                                {"MASTER_ADDR", "head"}, {"MASTER_PORT", "1234"}});
  EXPECT_EQ(m.master_addr, "head");
  EXPECT_EQ(m.local_world_size, 2);
  EXPECT_NE(usage_error({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}).find("SLURM_JOB_NODELIST"), std::string::npos);
}

// Variables that contradict each other, or a launcher's variable set to nothing, are refused by
// name: never a job of one process, never ranks waiting for a world that cannot meet.
TEST(Launch, InconsistentLauncherVariablesAreRefused) {
  EXPECT_NE(usage_error({{"SLURM_PROCID", ""}, {"SLURM_NTASKS", "8"}, {"MASTER_ADDR", "a"}})
                .find("launcher: SLURM_PROCID is set but empty"),
            std::string::npos);
  EXPECT_NE(usage_error({{"RANK", "0"}, {"WORLD_SIZE", ""}}).find("WORLD_SIZE is set but empty"), std::string::npos);
  EXPECT_NE(usage_error({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_NTASKS_PER_NODE", "4"},
                         {"MASTER_ADDR", "a"}})
                .find("launcher (slurm): 4 ranks on this node, more than the world's 2"),
            std::string::npos);
  EXPECT_NE(usage_error({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_NODEID", "2"}, {"SLURM_NNODES", "2"},
                         {"MASTER_ADDR", "a"}})
                .find("SLURM_NODEID=2 is outside SLURM_NNODES=2"),
            std::string::npos);
  EXPECT_NE(usage_error({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", ""}, {"MASTER_ADDR", "a"}})
                .find("SLURM_LOCALID is set but empty"),
            std::string::npos);
  // A variable of one launcher alone is no launcher.
  EXPECT_EQ(launch_from({{"RANK", "3"}}).launcher, "none");
}

TEST(Launch, SlurmNodeLists) {
  EXPECT_EQ(first_slurm_host("node1"), "node1");
  EXPECT_EQ(first_slurm_host("node1,node2"), "node1");
  EXPECT_EQ(first_slurm_host("gpu[12,14-16]"), "gpu12");
  EXPECT_EQ(first_slurm_host("a-b[0003-0005],c[1]"), "a-b0003");
  EXPECT_THROW(first_slurm_host("gpu[x-3]"), UsageError);
  EXPECT_THROW(first_slurm_host("gpu[1-3"), UsageError);
  EXPECT_THROW(first_slurm_host(""), UsageError);
  // A name of digits alone would be resolved as an IPv4 address ("01" is 0.0.0.1).
  for (const char* bad : {"[01]", "[01-03],gpu1", "01", "123", "gpu 1", "g\x1b[31m[1]"}) {
    try {
      first_slurm_host(bad);
      ADD_FAILURE() << bad << " read as a node list";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("set MASTER_ADDR"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\x1b'), std::string::npos) << e.what();
    }
  }
  EXPECT_NE(usage_error({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NODELIST", "[01]"}}).find("[01]"),
            std::string::npos);
}

TEST(Launch, TheJobsSecretComesFromTheEnvironmentOrIsDrawnForGpusN) {
  const Launch l = launch_from({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"},
                                {"UPGRADEBENCH_JOB_SECRET", "s3cret-of-the-job"}});
  EXPECT_EQ(l.secret, "s3cret-of-the-job");
  const std::string a = new_job_secret(), b = new_job_secret();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_NE(a, b);
}

TEST(Launch, OpenMpi) {
  const Launch l = launch_from({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                                {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  EXPECT_EQ(l.launcher, "openmpi");
  EXPECT_EQ(l.rank, 3);
  EXPECT_EQ(l.master_addr, "127.0.0.1");  // one node
  EXPECT_NE(usage_error({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "8"},
                         {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}})
                .find("MASTER_ADDR is not set"),
            std::string::npos);
}

TEST(Spawn, TheGpusOptionIsDroppedForTheChildren) {
  EXPECT_EQ(without_gpus_option({"upgradebench", "nccl", "--gpus", "2", "-b", "8"}),
            (std::vector<std::string>{"upgradebench", "nccl", "-b", "8"}));
  EXPECT_EQ(without_gpus_option({"upgradebench", "nccl", "--gpus=all"}), (std::vector<std::string>{"upgradebench", "nccl"}));
  EXPECT_GT(free_local_port(), 0);
}

}  // namespace
}  // namespace ub::dist
