// `--gpus N` on one host, without a launcher: this process becomes the parent of N ranks of
// itself, each started with the variables torchrun would set (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT a free port, UPGRADEBENCH_JOB_SECRET a
// secret drawn for the job) and the same command line
// minus --gpus. The parent waits for all of them; when one fails, the others have 60 s to end
// (their watchdog aborts them first), then are killed: the job never hangs. It returns the exit
// code of the rank that failed first (0 when all succeeded), and says which one it was.
#pragma once

#include <string>
#include <vector>

namespace ub::dist {

// A TCP port on 127.0.0.1 nobody listens on now.
int free_local_port();

// 32 hexadecimal digits from the kernel's random source: the secret of a job --gpus N starts.
std::string new_job_secret();

struct SpawnResult {
  int exit_code = 0;         // of the first rank to fail, 0 if none did
  int first_failed_rank = -1;
  std::string how;           // "exit code 1", "killed by signal 9"
};

// Runs `argv` (argv[0]: the program; /proc/self/exe is what runs) as ranks 0..n-1.
SpawnResult spawn_local_ranks(int n, const std::vector<std::string>& argv, double grace_s = 60);

// `args` without the `--gpus N` / `--gpus=N` option.
std::vector<std::string> without_gpus_option(const std::vector<std::string>& args);

}  // namespace ub::dist
