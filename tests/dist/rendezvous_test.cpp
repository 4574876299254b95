// The rendezvous and the watchdog with real processes on this machine: every rank learns the
// world and rank 0's blob; a missing rank is named after the timeout; a rank that reports a
// failure, exits or is killed makes every other rank's handler run, naming it, within seconds.
// Who may join: rank 0 listens only at MASTER_ADDR, a job needs its secret, and strangers (a wrong
// proof of it, a malformed hello, an oversize message) are turned away while the job meets; a
// rank never sends the secret, and takes no world from a rank 0 that cannot prove it.
#include "dist/rendezvous.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <sstream>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <optional>

#include "base/error.hpp"
#include "dist/job_proof.hpp"
#include "dist/spawn.hpp"

namespace ub::dist {
namespace {

// A folder of this process's own (tests may run in parallel, copies of one test too), made once.
const std::string& scratch() {
  static const std::string dir = [] {
    std::string pattern = ::testing::TempDir() + "/rendezvous_XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    return pattern;
  }();
  return dir;
}

using Clock = std::chrono::steady_clock;

Launch rank_of(int rank, int world, int port) {
  Launch l;
  l.launcher = "test";
  l.rank = rank, l.world_size = world, l.local_rank = rank, l.local_world_size = world;
  l.master_addr = "127.0.0.1", l.master_port = port;
  l.secret = "0123456789abcdef-test-secret";
  return l;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `body(rank)` in `world` child processes; each child's exit code is body's return value
// (an exception: 99); a child still there after `kill_after_s` is killed. Returns the exit codes, in rank
// order, and the seconds it took.
std::pair<std::vector<int>, double> run_ranks(int world, const std::function<int(int)>& body, double kill_after_s = 20) {
  const auto start = Clock::now();
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      int code = 99;
      try {
        code = body(r);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
      }
      std::fflush(nullptr);
      _exit(code);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes(static_cast<size_t>(world), -1);
  for (size_t left = pids.size(); left > 0;) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    for (size_t r = 0; r < pids.size(); ++r) {
      if (pid > 0 && pids[r] == pid) {
        codes[r] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        --left;
      }
    }
    if (pid <= 0) {
      if (Clock::now() - start > std::chrono::duration<double>(kill_after_s)) {
        for (size_t r = 0; r < pids.size(); ++r) {
          if (codes[r] < 0) kill(pids[r], SIGKILL);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  return {codes, std::chrono::duration<double>(Clock::now() - start).count()};
}

TEST(Rendezvous, EveryRankLearnsTheWorldAndTheBlob) {
  const int port = free_local_port();
  const std::string dir = scratch();
  const auto [codes, seconds] = run_ranks(4, [&](int r) {
    Rendezvous rv(rank_of(r, 4, port), "host-" + std::to_string(r), [] { return std::string("\x01\x02\xff unique", 10); },
                  10);
    std::ofstream(dir + "/rv_" + std::to_string(r)) << rv.infos()[0] << "," << rv.infos()[3] << "," << rv.blob().size()
                                                    << "," << (rv.blob() == std::string("\x01\x02\xff unique", 10));
    return 0;
  });
  EXPECT_EQ(codes, (std::vector<int>{0, 0, 0, 0}));
  for (int r = 0; r < 4; ++r) EXPECT_EQ(slurp(dir + "/rv_" + std::to_string(r)), "host-0,host-3,10,1") << "rank " << r;
}

TEST(Rendezvous, AMissingRankIsNamedAfterTheTimeout) {
  const int port = free_local_port();
  try {
    Rendezvous rv(rank_of(0, 3, port), "", {}, 1.0);
    FAIL() << "a world of 3 met with one rank";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("rank(s) 1, 2 of 3 did not arrive within 1 s"), std::string::npos) << e.what();
  }
  try {
    Rendezvous rv(rank_of(2, 3, free_local_port()), "", {}, 1.0);
    FAIL() << "joined nobody";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2: nobody answered at 127.0.0.1:"), std::string::npos) << e.what();
  }
}

// Each rank meets, watches, and waits; `misbehave(rank, rendezvous)` makes one of them fail.
// Every handler writes "rank <failed>: <reason>" to a file and exits 3.
std::pair<std::vector<int>, double> failing_job(int world, int bad, const std::function<void(Rendezvous&)>& misbehave,
                                                const std::string& tag, double kill_after_s = 20) {
  const int port = free_local_port();
  const std::string dir = scratch();
  return run_ranks(world, [&](int r) {
    Rendezvous rv(rank_of(r, world, port), "", {}, 10);
    rv.watch(
        [&, r](int failed, const std::string& reason) {
          std::ofstream(dir + "/" + tag + "_" + std::to_string(r)) << "rank " << failed << ": " << reason;
          std::fflush(nullptr);
          _exit(3);
        },
        5);
    if (r == bad) misbehave(rv);
    std::this_thread::sleep_for(std::chrono::seconds(30));  // a hang, unless the watchdog ends it
    return 0;
  }, kill_after_s);
}

TEST(Rendezvous, AReportedFailureReachesEveryRank) {
  const auto [codes, seconds] = failing_job(3, 2, [](Rendezvous& rv) { rv.report_failure("NCCL: unhandled error"); }, "report");
  EXPECT_EQ(codes, (std::vector<int>{3, 3, 3}));
  EXPECT_LT(seconds, 10);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(slurp(scratch() + "/report_" + std::to_string(r)), "rank 2: NCCL: unhandled error") << r;
  }
}

TEST(Rendezvous, AKilledRankEndsTheJob) {
  const auto [codes, seconds] = failing_job(3, 1, [](Rendezvous&) { ::kill(::getpid(), SIGKILL); }, "killed");
  EXPECT_EQ(codes, (std::vector<int>{3, 128 + SIGKILL, 3}));
  EXPECT_LT(seconds, 10);
  for (int r : {0, 2}) {
    const std::string said = slurp(scratch() + "/killed_" + std::to_string(r));
    EXPECT_NE(said.find("rank 1: rank 1's connection closed without a goodbye"), std::string::npos) << said;
  }
}

TEST(Rendezvous, ADeadRankZeroEndsTheJob) {
  const auto [codes, seconds] = failing_job(3, 0, [](Rendezvous&) { _exit(1); }, "root");
  EXPECT_EQ(codes, (std::vector<int>{1, 3, 3}));
  EXPECT_LT(seconds, 10);
  EXPECT_NE(slurp(scratch() + "/root_1").find("rank 0's connection closed"), std::string::npos);
}

TEST(Rendezvous, ASilentRankIsAFailureAfterTheLimit) {
  // Rank 1 stops everything (SIGSTOP: alive, its socket open, no heartbeat): the limit is 5 s. A
  // child of it wakes it at 7 s: it learns that it was the one declared failed, not that rank 0 died.
  const auto stop_and_wake = [](Rendezvous&) {
    if (::fork() == 0) {
      ::sleep(7);
      ::kill(::getppid(), SIGCONT);
      _exit(0);
    }
    ::kill(::getpid(), SIGSTOP);
  };
  const auto [codes, seconds] = failing_job(2, 1, stop_and_wake, "silent", 12);
  EXPECT_EQ(codes, (std::vector<int>{3, 3}));  // rank 0 at ~5 s, rank 1 once woken
  EXPECT_NE(slurp(scratch() + "/silent_0").find("no heartbeat from rank 1"), std::string::npos);
  EXPECT_EQ(slurp(scratch() + "/silent_1"), "rank 1: no heartbeat from rank 1 for 5 s");
  // Rank 0 stopped: woken, it too learns that it was the silent one, not that rank 1 died.
  const auto [codes0, seconds0] = failing_job(2, 0, stop_and_wake, "silent_zero", 12);
  EXPECT_EQ(codes0, (std::vector<int>{3, 3}));
  EXPECT_EQ(slurp(scratch() + "/silent_zero_1"), "rank 0: no heartbeat from rank 0 for 5 s");
  EXPECT_EQ(slurp(scratch() + "/silent_zero_0"), "rank 0: no heartbeat from rank 0 for 5 s");
}

// A TCP connection to `address`:`port`, or -1 (retried for a second while rank 0 starts).
int connect_to(const char* address, int port, double retry_s = 1) {
  const auto until = Clock::now() + std::chrono::duration<double>(retry_s);
  do {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, address, &addr.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
    ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (Clock::now() < until);
  return -1;
}

// A frame as the rendezvous reads one: a 4-byte big-endian length (the payload's, unless given),
// a kind byte, the payload.
std::string frame(char kind, const std::string& payload, std::optional<uint32_t> length = std::nullopt) {
  std::string f(5, '\0');
  const uint32_t n = htonl(length.value_or(static_cast<uint32_t>(payload.size())));
  std::memcpy(f.data(), &n, 4);
  f[4] = kind;
  return f + payload;
}

// One whole frame from `fd` (waiting up to its receive timeout): {kind, payload}, or nullopt.
std::optional<std::pair<char, std::string>> read_frame(int fd) {
  auto read_exactly = [fd](size_t n) -> std::optional<std::string> {
    std::string got(n, '\0');
    for (size_t have = 0; have < n;) {
      const ssize_t k = ::recv(fd, got.data() + have, n - have, 0);
      if (k <= 0) return std::nullopt;
      have += static_cast<size_t>(k);
    }
    return got;
  };
  const auto head = read_exactly(5);
  if (!head) return std::nullopt;
  uint32_t n = 0;
  std::memcpy(&n, head->data(), 4);
  const auto payload = read_exactly(ntohl(n));
  if (!payload) return std::nullopt;
  return std::pair{(*head)[4], *payload};
}

void receive_timeout(int fd, long seconds) {
  timeval t{seconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
}

// A hello of the right form whose proof is no proof of the job's secret.
std::string unproved_hello() { return "1\n2\n" + std::string(32, 'a') + "\n" + std::string(64, 'b') + "\n{}"; }

// Whether rank 0, after its challenge, closes the connection within 5 s of `bytes` (it turned the
// stranger away): the reason it gave with it, or nullopt.
std::optional<std::string> turned_away(int port, const std::string& bytes) {
  const int fd = connect_to("127.0.0.1", port, 5);
  if (fd < 0) return std::nullopt;
  receive_timeout(fd, 5);
  const auto challenge = read_frame(fd);
  ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  const auto why = read_frame(fd);  // a failure: why it is turned away
  char c = 0;
  const ssize_t k = ::recv(fd, &c, 1, 0);
  ::close(fd);
  if (!challenge || challenge->first != 6 || !why || why->first != 4) return std::nullopt;
  if (!(k == 0 || (k < 0 && errno == ECONNRESET))) return std::nullopt;
  return why->second;
}

// A socket listening on a free loopback port, where the test plays rank 0 (or whoever holds the
// port first); -1 when it cannot be made.
int loopback_listener(int& port) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  socklen_t len = sizeof addr;
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 4) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return -1;
  }
  port = ntohs(addr.sin_port);
  return listener;
}

// The next connection to `listener`, sent a challenge as rank 0 sends one.
int accept_with_challenge(int listener) {
  const int fd = ::accept(listener, nullptr, nullptr);
  receive_timeout(fd, 5);
  const std::string challenge = new_challenge();
  ::send(fd, frame(6, challenge).data(), 5 + challenge.size(), MSG_NOSIGNAL);
  return fd;
}

TEST(Rendezvous, StrangersAreTurnedAwayAndTheJobStillMeets) {
  const int port = free_local_port();
  const std::string dir = scratch();
  // Ranks 0 and 1 of a world of 2; "rank" 2 is a stranger who comes first, four times.
  const auto [codes, seconds] = run_ranks(3, [&](int r) {
    if (r == 2) {
      const bool all = turned_away(port, frame(1, unproved_hello())) &&  // a wrong proof
                       turned_away(port, frame(1, "1 no hello")) &&       // a malformed hello
                       turned_away(port, frame(1, "1\nthe-secret-itself-in-clear\n{}")) &&
                       turned_away(port, frame(1, "", 1u << 30)) &&             // 1 GiB announced
                       turned_away(port, frame(2, "not a hello!"));             // another kind
      // Another protocol's bytes are said as bytes, not as a length.
      const auto web = turned_away(port, "GET / HTTP/1.0\r\n\r\n");
      return !all ? 5 : !web || web->find("not this job's protocol (its first bytes: 'GET ')") == std::string::npos ? 6 : 0;
    }
    if (r == 1) std::this_thread::sleep_for(std::chrono::seconds(3));  // the stranger first
    Rendezvous rv(rank_of(r, 2, port), "host-" + std::to_string(r), [] { return std::string("blob"); }, 15);
    std::ofstream(dir + "/stranger_" + std::to_string(r)) << rv.infos()[1] << "," << rv.blob();
    return 0;
  });
  EXPECT_EQ(codes, (std::vector<int>{0, 0, 0})) << "2: the stranger was not turned away (5) or could not connect, or "
                                                   "a web request was not said as one (6)";
  for (int r = 0; r < 2; ++r) EXPECT_EQ(slurp(dir + "/stranger_" + std::to_string(r)), "host-1,blob") << "rank " << r;
}

TEST(Rendezvous, AMissingRankAfterStrangersSaysTheyWereTurnedAway) {
  const int port = free_local_port();
  std::thread stranger([&] { turned_away(port, frame(1, unproved_hello())); });
  try {
    Rendezvous rv(rank_of(0, 2, port), "", {}, 2.0);
    FAIL() << "a stranger made the world";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("rank(s) 1 of 2 did not arrive within 2 s (1 connection(s) turned away, the "
                                         "last: a wrong job secret from 127.0.0.1; do all ranks have the same "
                                         "UPGRADEBENCH_JOB_SECRET?)"),
              std::string::npos)
        << e.what();
  }
  stranger.join();
}

// Linux routes all of 127.0.0.0/8 to the loopback device: rank 0 told 127.0.0.2 is not reached at 127.0.0.1.
TEST(Rendezvous, RankZeroListensOnlyAtMasterAddr) {
  const int port = free_local_port();
  const auto [codes, seconds] = run_ranks(2, [&](int r) {
    if (r == 0) {
      Launch l = rank_of(0, 2, port);
      l.master_addr = "127.0.0.2";
      try {
        Rendezvous rv(l, "", {}, 3);
      } catch (const WorkError&) {
        return 0;  // nobody joined: the other process only knocked
      }
      return 1;
    }
    const int there = connect_to("127.0.0.2", port, 2);
    const int elsewhere = connect_to("127.0.0.1", port, 0.2);
    if (there >= 0) ::close(there);
    if (elsewhere >= 0) ::close(elsewhere);
    return there >= 0 && elsewhere < 0 ? 0 : 7;
  });
  EXPECT_EQ(codes, (std::vector<int>{0, 0})) << "7: reached at another address than MASTER_ADDR, or not at it";
}

// Whoever holds MASTER_ADDR's port first (here: the test, listening there) learns no secret from
// a rank's hello, and a world it sends without the proof is refused, naming the address.
TEST(Rendezvous, ARankSendsNoSecretAndTakesNoWorldFromAnImpostor) {
  int port = 0;
  const int listener = loopback_listener(port);
  ASSERT_GE(listener, 0);
  std::string hello, refusal;
  std::thread rank1([&] {
    try {
      Rendezvous rv(rank_of(1, 2, port), "host-1", {}, 5);
    } catch (const WorkError& e) {
      refusal = e.what();
    }
  });
  const int fd = accept_with_challenge(listener);
  if (const auto h = read_frame(fd)) hello = h->second;
  const std::string world = std::string(64, 'c') + "\n{\"infos\": [\"\", \"host-1\"], \"blob\": \"00\"}";
  ::send(fd, frame(2, world).data(), 5 + world.size(), MSG_NOSIGNAL);
  rank1.join();
  ::close(fd);
  ::close(listener);
  EXPECT_NE(hello.find("host-1"), std::string::npos) << "no hello came: " << hello;
  EXPECT_EQ(hello.find(rank_of(1, 2, port).secret), std::string::npos) << "the secret went to the impostor: " << hello;
  EXPECT_NE(refusal.find("rank 1: 127.0.0.1:" + std::to_string(port) +
                         " sent a world without the proof of the job's secret: not this job's rank 0"),
            std::string::npos)
      << refusal;
}

TEST(Rendezvous, AJobNeedsItsSecret) {
  Launch l = rank_of(0, 2, free_local_port());
  l.secret = "short";
  try {
    Rendezvous rv(l, "", {}, 1);
    FAIL() << "met without a secret";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("the job has no secret: set UPGRADEBENCH_JOB_SECRET"), std::string::npos) << e.what();
  }
  // A world of one meets nobody: no secret needed.
  EXPECT_NO_THROW(Rendezvous(rank_of(0, 1, free_local_port()), "", {}, 1));
  // Loopback cannot be where ranks of other nodes meet rank 0.
  Launch two_nodes = rank_of(0, 4, free_local_port());
  two_nodes.local_world_size = 2;
  EXPECT_THROW(Rendezvous(two_nodes, "", {}, 1), UsageError);
}

// Runs `ranks` processes that meet as `launch_of(r)` says within `timeout_s`; each that fails
// writes its error to dir/<tag>_<r>. Their exit codes, in rank order.
std::vector<int> meet_and_keep(const std::string& dir, const std::string& tag, int ranks,
                               const std::function<Launch(int)>& launch_of, double timeout_s) {
  return run_ranks(ranks, [&](int r) {
    try {
      Rendezvous rv(launch_of(r), "", {}, timeout_s);
    } catch (const WorkError& e) {
      std::ofstream(dir + "/" + tag + "_" + std::to_string(r)) << e.what();
      return 1;
    }
    return 0;
  }).first;
}

// A rank that arrived learns why no world comes: rank 0 gave up on a missing rank, turned it away
// for another secret, or ended without a word; never a guess at the secret it proved.
TEST(Rendezvous, AnArrivedRankLearnsWhyTheMeetingEnded) {
  const int port = free_local_port();
  const std::string dir = scratch();
  // A world of 3 whose rank 2 never comes.
  EXPECT_EQ(meet_and_keep(dir, "gave_up", 2, [&](int r) { return rank_of(r, 3, port); }, 2), (std::vector<int>{1, 1}));
  EXPECT_NE(slurp(dir + "/gave_up_1").find("rank 1: rank 0 gave up the meeting: rank(s) 2 of 3 did not arrive within 2 s"),
            std::string::npos) << slurp(dir + "/gave_up_1");
  const int port2 = free_local_port();
  const auto another_secret = [&](int r) {  // rank 1 with another secret
    Launch l = rank_of(r, 2, port2);
    if (r == 1) l.secret = "another-secret-of-enough-characters";
    return l;
  };
  EXPECT_EQ(meet_and_keep(dir, "secret", 2, another_secret, 2), (std::vector<int>{1, 1}));
  EXPECT_NE(slurp(dir + "/secret_1").find("rank 1: rank 0 turned this connection away: a wrong job secret (do all ranks "
                                          "have the same UPGRADEBENCH_JOB_SECRET?)"),
            std::string::npos) << slurp(dir + "/secret_1");
  // A rank whose launcher said another world size is turned away, told why.
  const int port4 = free_local_port();
  EXPECT_EQ(meet_and_keep(dir, "world", 2, [&](int r) { return rank_of(r, r == 1 ? 3 : 2, port4); }, 2),
            (std::vector<int>{1, 1}));
  EXPECT_NE(slurp(dir + "/world_1").find("rank 0 turned this connection away: rank 1 says the world is 3 ranks, rank 0 "
                                         "says 2: the launcher's WORLD_SIZE differs between ranks"),
            std::string::npos) << slurp(dir + "/world_1");
  EXPECT_NE(slurp(dir + "/world_0").find("WORLD_SIZE differs"), std::string::npos) << slurp(dir + "/world_0");
  EXPECT_EQ(slurp(dir + "/world_0").find("UPGRADEBENCH_JOB_SECRET"), std::string::npos) << "the secret was right: "
                                                                                        << slurp(dir + "/world_0");
  // Two processes as rank 1: the meeting ends, and both learn why.
  const int port5 = free_local_port();
  const auto rank_one_twice = [&](int r) {
    if (r == 2) std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the second rank 1 comes last
    return rank_of(r == 2 ? 1 : r, 3, port5);
  };
  EXPECT_EQ(meet_and_keep(dir, "twice", 3, rank_one_twice, 4), (std::vector<int>{1, 1, 1}));
  for (int r : {1, 2}) {
    EXPECT_NE(slurp(dir + "/twice_" + std::to_string(r)).find("rank 0 gave up the meeting: a rank of this job said it is "
                                                              "rank 1 (world of 3, already arrived): the launcher gave one "
                                                              "RANK twice"),
              std::string::npos) << slurp(dir + "/twice_" + std::to_string(r));
  }
  // A "rank 0" that takes the hello and closes without a word (killed before the world).
  int port3 = 0;
  const int listener = loopback_listener(port3);
  ASSERT_GE(listener, 0);
  std::string refusal;
  std::thread rank1([&] {
    try {
      Rendezvous rv(rank_of(1, 2, port3), "", {}, 10);
    } catch (const WorkError& e) {
      refusal = e.what();
    }
  });
  const int fd = accept_with_challenge(listener);
  read_frame(fd);
  ::close(fd);
  rank1.join();
  ::close(listener);
  EXPECT_NE(refusal.find("closed the connection"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("s after this rank's hello, without a word"), std::string::npos) << refusal;
  EXPECT_EQ(refusal.find("within 10 s"), std::string::npos) << "the time it took, not the limit: " << refusal;
  EXPECT_EQ(refusal.find("SECRET"), std::string::npos) << refusal;
}

// An address that neither accepts nor refuses (a firewall dropping packets; here a listener whose
// queue is full, so the kernel drops further SYNs) is given up on at the rendezvous timeout, not
// after the kernel's two minutes of SYN retries.
TEST(Rendezvous, AnAddressThatNeverAnswersIsGivenUpOnInTime) {
  int port = 0;
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  socklen_t len = sizeof addr;
  ASSERT_TRUE(listener >= 0 && ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
              ::listen(listener, 0) == 0 && ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  port = ntohs(addr.sin_port);
  std::vector<int> queued;  // never accepted: they fill the queue
  for (int i = 0; i < 4; ++i) {
    queued.push_back(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    ::connect(queued.back(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto start = Clock::now();
  try {
    Rendezvous rv(rank_of(1, 2, port), "", {}, 1.5);
    FAIL() << "met a rank 0 that never answered";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("within 1.5 s"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 5.0);
  for (const int fd : queued) ::close(fd);
  ::close(listener);
}

// 0.0.0.0 and :: name every interface, no host: refused on every rank, before anything listens.
TEST(Rendezvous, AnUnspecifiedMasterAddrIsRefused) {
  for (const char* address : {"0.0.0.0", "::"}) {
    for (int r : {0, 1}) {
      Launch l = rank_of(r, 2, free_local_port());
      l.master_addr = address;
      try {
        Rendezvous rv(l, "", {}, 2);
        FAIL() << address << " met";
      } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find(fmt::format("MASTER_ADDR {} is the unspecified address", address)),
                  std::string::npos) << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace ub::dist
