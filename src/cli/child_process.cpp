// Child processes of this program; see child_process.hpp.
#include "cli/child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "base/error.hpp"
#include "base/file_place.hpp"
#include "base/unique_fd.hpp"

extern char** environ;

namespace ub::cli {

namespace {

// Copies what the child writes to its standard error (`from`) to ours and into `log`, keeping
// the last complete line.
std::string relay(int from, std::FILE* log) {
  std::string line, last;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(from, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::fwrite(buf, 1, static_cast<size_t>(n), stderr);
    std::fflush(stderr);
    if (log) std::fwrite(buf, 1, static_cast<size_t>(n), log);
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] == '\n' || buf[i] == '\r') {
        if (!line.empty()) last = line;
        line.clear();
      } else if (line.size() < 4096) {
        line += buf[i];
      }
    }
  }
  if (log) std::fflush(log);
  return line.empty() ? last : line;
}

}  // namespace

std::string this_program() {
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  return ec ? std::string("upgradebench") : self;
}

ChildRun run_this_program(const std::vector<std::string>& args, const std::string& stdout_path, const std::string& what,
                          const std::string& stderr_log) {
  std::vector<std::string> all = {this_program()};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> log(nullptr, &std::fclose);
  if (!stderr_log.empty()) {  // never through a link planted where the log goes
    const int fd = open_for_writing_no_follow(stderr_log, fmt::format("the log of {}", what));
    log.reset(::fdopen(fd, "w"));
    if (!log) {
      ::close(fd);
      throw WorkError(fmt::format("{}: cannot write its log {}: {}", what, stderr_log, std::strerror(errno)));
    }
  }
  // Its output file too: opened here with O_NOFOLLOW, so a link there is refused with a message
  // rather than written through (or a child that cannot start).
  UniqueFd out_file;
  if (!stdout_path.empty()) out_file = UniqueFd(open_for_writing_no_follow(stdout_path, fmt::format("the output of {}", what)));
  int fds[2] = {-1, -1};
  if (log && ::pipe2(fds, O_CLOEXEC) != 0) throw WorkError(fmt::format("{}: no pipe: {}", what, std::strerror(errno)));
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (out_file.get() >= 0) posix_spawn_file_actions_adddup2(&actions, out_file.get(), STDOUT_FILENO);
  else posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  if (log) posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw WorkError(fmt::format("{}: cannot start it: {}", what, std::strerror(rc)));
  ChildRun r;
  if (log) {
    write_end = UniqueFd();  // the child holds the only write end: end of file when it ends
    r.last_error = relay(read_end.get(), log.get());
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return r;
}

}  // namespace ub::cli
