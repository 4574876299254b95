// Spawning the ranks of a one-host job; see spawn.hpp.
#include "dist/spawn.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "base/error.hpp"
#include "dist/launch.hpp"

extern char** environ;

namespace ub::dist {

namespace {

// The variables a launcher sets per rank (replaced for each child).
bool is_rank_variable(const std::string& kv) {
  for (const char* k : {"RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "LOCAL_WORLD_SIZE=", "MASTER_ADDR=", "MASTER_PORT=",
                        "GROUP_RANK=", "UPGRADEBENCH_JOB_SECRET="}) {
    if (kv.rfind(k, 0) == 0) return true;
  }
  return false;
}

}  // namespace

std::string new_job_secret() {
  unsigned char bytes[16];
  for (size_t got = 0; got < sizeof bytes;) {
    const ssize_t k = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) throw WorkError(fmt::format("--gpus: cannot draw the job's secret: {}", std::strerror(errno)));
    got += static_cast<size_t>(k);
  }
  std::string hex;
  for (const unsigned char b : bytes) hex += fmt::format("{:02x}", b);
  return hex;
}

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) ::close(fd);
    throw WorkError(fmt::format("--gpus: cannot find a free local port: {}", std::strerror(errno)));
  }
  const int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

std::vector<std::string> without_gpus_option(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--gpus") {
      ++i;  // and its value
      continue;
    }
    if (args[i].rfind("--gpus=", 0) == 0) continue;
    out.push_back(args[i]);
  }
  return out;
}

SpawnResult spawn_local_ranks(int n, const std::vector<std::string>& argv, double grace_s) {
  const int port = free_local_port();
  const std::string secret = new_job_secret();
  std::vector<pid_t> pids(static_cast<size_t>(n), -1);
  for (int r = 0; r < n; ++r) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      if (!is_rank_variable(*e)) env.emplace_back(*e);
    }
    for (const auto& [k, v] : {std::pair<std::string, std::string>{"RANK", std::to_string(r)},
                               {"WORLD_SIZE", std::to_string(n)},
                               {"LOCAL_RANK", std::to_string(r)},
                               {"LOCAL_WORLD_SIZE", std::to_string(n)},
                               {"GROUP_RANK", "0"},
                               {"MASTER_ADDR", "127.0.0.1"},
                               {"MASTER_PORT", std::to_string(port)},
                               {kJobSecretVariable, secret}}) {
      env.push_back(k + "=" + v);
    }
    std::vector<char*> cargv, cenv;
    std::vector<std::string> args = argv;
    for (auto& a : args) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    for (auto& e : env) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, cargv.data(), cenv.data());
    if (rc != 0) {
      for (pid_t p : pids) {
        if (p > 0) ::kill(p, SIGKILL);
      }
      throw WorkError(fmt::format("--gpus: cannot start rank {}: {}", r, std::strerror(rc)));
    }
    pids[static_cast<size_t>(r)] = pid;
  }
  SpawnResult result;
  int running = n;
  std::chrono::steady_clock::time_point kill_at{};
  while (running > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      --running;
      int rank = -1;
      for (int r = 0; r < n; ++r) {
        if (pids[static_cast<size_t>(r)] == pid) rank = r, pids[static_cast<size_t>(r)] = -1;
      }
      const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!ok && result.first_failed_rank < 0) {
        result.first_failed_rank = rank;
        result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        result.how = WIFEXITED(status) ? fmt::format("exit code {}", WEXITSTATUS(status))
                                       : fmt::format("killed by signal {}", WTERMSIG(status));
        kill_at = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(grace_s));
      }
      continue;
    }
    if (pid < 0 && errno != EINTR) break;
    if (result.first_failed_rank >= 0 && std::chrono::steady_clock::now() >= kill_at) {
      for (pid_t p : pids) {
        if (p > 0) ::kill(p, SIGKILL);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return result;
}

}  // namespace ub::dist
