// How the ranks of a job meet, and how a failure anywhere reaches everyone: a small TCP
// rendezvous at the launcher's MASTER_ADDR:MASTER_PORT. Rank 0 listens; every other rank
// connects (retrying until the timeout: rank 0 may start last) and says who it is; rank 0 answers
// everyone with what every rank said and one blob it made (NCCL's unique id), so each rank knows
// the world before NCCL starts. Who did not arrive in time is named in the error.
//
// The connections then stay open as the job's watchdog: every rank sends a heartbeat each second;
// rank 0 watches every other rank, the others watch rank 0. A rank that reports a failure, whose
// connection closes without a goodbye (a crash, kill -9: the kernel closes its socket) or that is
// silent for longer than the limit is a failure of the job: rank 0 tells every rank which rank
// failed first and why, and each rank's handler aborts its work (its NCCL communicator) and exits.
// Who may join: rank 0 listens at the address MASTER_ADDR names (not on every interface), and
// rank 0 and each rank prove to each other that they hold the job's secret
// (UPGRADEBENCH_JOB_SECRET, launch.hpp) by answering each other's fresh challenge with an
// HMAC-SHA256 keyed by it (job_proof.hpp): a rank takes the world (and NCCL's id in it) only from
// a rank 0 that proved it, and the secret itself never travels. Every message's length is bounded
// (kMaxHelloBytes, kMaxControlBytes; the world in proportion to the ranks). A stranger (a wrong
// proof, a malformed hello, an oversize message) is dropped and said so on stderr, and the job
// goes on meeting; the timeout's error counts them. Who is turned away, and the ranks that arrived
// when rank 0 gives up on one that did not, are told why. 0.0.0.0 and :: (no host) are refused. What follows the meeting (heartbeats,
// failures, goodbyes) is not signed: whoever can write into the job's TCP connections can end it.
//
// Plain POSIX sockets: tested with local processes on any machine.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dist/launch.hpp"

namespace ub::dist {

// The longest hello (the rank, the secret and what the rank says of itself) and the longest
// message after it (a heartbeat, a failure's reason, a goodbye): more is no rank of this job.
inline constexpr size_t kMaxHelloBytes = size_t{16} << 10;
inline constexpr size_t kMaxControlBytes = size_t{64} << 10;

class Rendezvous {
 public:
  // Meets the other ranks of `launch`. `info`: what this rank says about itself (host, GPU), in
  // any text; `make_blob`: rank 0 only, called once every rank has arrived. Throws WorkError on a
  // timeout, naming the ranks that did not arrive (rank 0) or the address nobody answered at;
  // UsageError when the job has no secret (a world of more than one) or MASTER_ADDR is loopback
  // while ranks run on other nodes; WorkError when rank 0 cannot listen there (not this host's).
  Rendezvous(const Launch& launch, std::string info, const std::function<std::string()>& make_blob, double timeout_s);
  // Says goodbye (a clean end, not a failure) and closes the connections.
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  int rank() const { return launch_.rank; }
  int world_size() const { return launch_.world_size; }
  // What each rank said, in rank order, and rank 0's blob.
  const std::vector<std::string>& infos() const { return infos_; }
  const std::string& blob() const { return blob_; }

  using FailureHandler = std::function<void(int failed_rank, const std::string& reason)>;
  // From now on, the first failure anywhere in the job calls `on_failure` once, on the watchdog's
  // thread (heartbeats each second; `silence_limit_s` without one from a watched rank is a failure).
  void watch(FailureHandler on_failure, double silence_limit_s = 30);
  // This rank failed: every rank is told (through rank 0) and its handler runs.
  void report_failure(const std::string& reason);

 private:
  struct Connection;
  void serve(const std::function<std::string()>& make_blob, double timeout_s);
  void join(double timeout_s);
  void watch_loop();
  void fail(int rank, const std::string& reason);  // once: tell the others, call the handler

  Launch launch_;
  std::vector<std::unique_ptr<Connection>> peers_;  // rank 0: one per other rank (index = rank); others: rank 0
  std::vector<std::string> infos_;
  std::string blob_;
  FailureHandler on_failure_;
  double silence_limit_s_ = 30;
  std::thread watchdog_;
  std::atomic<bool> stopping_{false}, failed_{false};
  std::mutex send_mutex_;
};

}  // namespace ub::dist
