// The rendezvous and the job's watchdog; see rendezvous.hpp. Messages are framed: a 4-byte
// big-endian payload length, a kind byte, the payload. The meeting, per rank:
//   rank 0 -> rank: challenge  "<c0>"                          (32 hex digits, fresh per connection)
//   rank -> rank 0: hello      "<rank>\n<world size>\n<c>\n<proof>\n<info>"   proof = HMAC(secret, hello text with c0)
//   rank 0 -> rank: world      "<proof>\n<world JSON>"          proof = HMAC(secret, world text with c)
// Neither side sends the secret; each answers the other's challenge (dist/job_proof.hpp).
#include "dist/rendezvous.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "base/error.hpp"
#include "base/text.hpp"
#include "dist/job_proof.hpp"

namespace ub::dist {

namespace {

using Clock = std::chrono::steady_clock;

enum class Kind : uint8_t { hello = 1, world = 2, heartbeat = 3, failure = 4, goodbye = 5, challenge = 6 };

struct Message {
  Kind kind;
  std::string payload;
};

constexpr const char* kWrongSecret = "a wrong job secret";

// Connections accepted and not yet a rank, at most: the oldest is dropped past it.
constexpr size_t kMaxPending = 256;

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<long long>(0, left));
}

bool send_message(int fd, Kind kind, const std::string& payload) {
  std::string frame(5, '\0');
  const uint32_t n = htonl(static_cast<uint32_t>(payload.size()));
  std::memcpy(frame.data(), &n, 4);
  frame[4] = static_cast<char>(kind);
  frame += payload;
  size_t sent = 0;
  while (sent < frame.size()) {
    const ssize_t k = ::send(fd, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    sent += static_cast<size_t>(k);
  }
  return true;
}

// "127.0.0.1:29500", "[::1]:29500".
std::string where(const Launch& l) {
  return l.master_addr.find(':') == std::string::npos ? fmt::format("{}:{}", l.master_addr, l.master_port)
                                                       : fmt::format("[{}]:{}", l.master_addr, l.master_port);
}

// What each side's proof covers: the other's challenge and everything it says with it, each
// tagged with its direction so a proof of one cannot stand for the other.
std::string hello_text(const std::string& rank0_challenge, int rank, int world, const std::string& challenge,
                       const std::string& info) {
  return fmt::format("upgradebench rendezvous hello\n{}\n{}\n{}\n{}\n{}", rank0_challenge, rank, world, challenge, info);
}
std::string world_text(const std::string& rank_challenge, const std::string& world) {
  return fmt::format("upgradebench rendezvous world\n{}\n{}", rank_challenge, world);
}
// A challenge's payload: 32 hex digits.
constexpr size_t kChallengeChars = 32;

std::string numeric_address(const sockaddr* addr, socklen_t len) {
  char host[NI_MAXHOST] = "?";
  ::getnameinfo(addr, len, host, sizeof host, nullptr, 0, NI_NUMERICHOST);
  return host;
}

bool is_loopback(const sockaddr* addr) {
  if (addr->sa_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(addr)->sin_addr.s_addr) >> 24) == 127;
  }
  return addr->sa_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr);
}

// 0.0.0.0 or ::, every interface of a host: rank 0 would listen on all of them, and a rank of
// another node would connect to its own host.
bool is_unspecified(const sockaddr* addr) {
  if (addr->sa_family == AF_INET) return reinterpret_cast<const sockaddr_in*>(addr)->sin_addr.s_addr == htonl(INADDR_ANY);
  return addr->sa_family == AF_INET6 && IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr);
}

void refuse_unspecified(const Launch& l, const sockaddr* addr) {
  if (!is_unspecified(addr)) return;
  throw UsageError(fmt::format("rendezvous: MASTER_ADDR {} is the unspecified address (every interface of a host), which "
                               "names no host to meet at: set MASTER_ADDR to rank 0's address (127.0.0.1 when every "
                               "rank runs on one host)", l.master_addr));
}

// Rank 0's listening socket, bound to the address MASTER_ADDR names on this host: the ranks reach
// it there, and nobody reaches it through another interface of the host.
int listen_at(const Launch& l) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const int gai = ::getaddrinfo(l.master_addr.c_str(), std::to_string(l.master_port).c_str(), &hints, &res);
  if (gai != 0) {
    throw UsageError(fmt::format("rendezvous: rank 0 cannot resolve MASTER_ADDR {}: {}", l.master_addr, gai_strerror(gai)));
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> held(res, ::freeaddrinfo);
  std::string why = "no address";
  for (const addrinfo* a = res; a; a = a->ai_next) {
    const std::string address = numeric_address(a->ai_addr, a->ai_addrlen);
    refuse_unspecified(l, a->ai_addr);
    if (is_loopback(a->ai_addr) && l.local_world_size < l.world_size) {
      throw UsageError(fmt::format("rendezvous: MASTER_ADDR {} is {} on rank 0's host, a loopback address the ranks "
                                   "on other nodes cannot reach: set MASTER_ADDR to rank 0's network address",
                                   l.master_addr, address));
    }
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) return fd;
    why = fmt::format("{}: {}", address, std::strerror(errno));
    ::close(fd);
  }
  throw WorkError(fmt::format("rendezvous: rank 0 cannot listen at MASTER_ADDR {} port {} ({}); MASTER_ADDR must "
                               "name rank 0's host, and the port be free", l.master_addr, l.master_port, why));
}

// A hello: "<rank>\n<the world's size, as the rank's launcher says it>\n<its challenge>\n<its
// proof>\n<what the rank says of itself>".
struct Hello {
  int rank = -1, world = 0;
  std::string challenge, proof, info;
};

std::optional<int> small_number(const std::string& digits) {
  if (digits.empty() || digits.size() > 7 || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoi(digits);
}

std::optional<Hello> parse_hello(const Message& m) {
  if (m.kind != Kind::hello) return std::nullopt;
  size_t at[4];
  size_t from = 0;
  for (size_t& a : at) {
    a = m.payload.find('\n', from);
    if (a == std::string::npos) return std::nullopt;
    from = a + 1;
  }
  const std::optional<int> rank = small_number(m.payload.substr(0, at[0]));
  const std::optional<int> world = small_number(m.payload.substr(at[0] + 1, at[1] - at[0] - 1));
  if (!rank || !world) return std::nullopt;
  Hello h{*rank, *world, m.payload.substr(at[1] + 1, at[2] - at[1] - 1), m.payload.substr(at[2] + 1, at[3] - at[2] - 1),
          m.payload.substr(at[3] + 1)};
  if (h.challenge.size() != kChallengeChars || !from_hex(h.challenge)) return std::nullopt;
  return h;
}

// The world rank 0 sends: its proof, every rank's info (each within a hello) and the blob, hex, in
// JSON (which may escape each byte of an info as six).
size_t world_limit(int world_size) { return 4096 + static_cast<size_t>(world_size) * 6 * kMaxHelloBytes; }

}  // namespace

struct Rendezvous::Connection {
  int fd = -1;
  int rank = -1;
  std::string peer;   // its address, for messages
  std::string challenge;  // rank 0: the challenge sent to this connection
  std::string inbox;  // bytes received, not yet a whole message
  size_t limit = kMaxHelloBytes;  // the longest payload it may send now
  size_t oversize = 0;            // the length it announced beyond `limit`; 0 while within it
  Clock::time_point last_heard = Clock::now();
  bool open = true, said_goodbye = false;

  explicit Connection(int f, std::string p = "") : fd(f), peer(std::move(p)) {}
  ~Connection() {
    if (fd >= 0) ::close(fd);
  }
  // A whole message from the inbox, if one has arrived; nullopt too when its announced length is
  // beyond `limit` (`oversize` says so): the inbox never holds more than a message's bound.
  std::optional<Message> next() {
    if (inbox.size() < 5 || oversize) return std::nullopt;
    uint32_t n = 0;
    std::memcpy(&n, inbox.data(), 4);
    n = ntohl(n);
    if (n > limit) {
      oversize = n;
      return std::nullopt;
    }
    if (inbox.size() < 5 + size_t{n}) return std::nullopt;
    Message m{static_cast<Kind>(inbox[4]), inbox.substr(5, n)};
    inbox.erase(0, 5 + size_t{n});
    return m;
  }
  // Reads what is there (waiting up to timeout_ms for something); false when the peer closed.
  bool receive(int timeout_ms) {
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, timeout_ms);
    if (r <= 0) return true;
    char buf[4096];
    const ssize_t k = ::recv(fd, buf, sizeof buf, 0);
    if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN)) return false;
    if (k > 0) inbox.append(buf, static_cast<size_t>(k));
    return true;
  }
  // The next message before `deadline`, or nullopt (timeout, closed or oversize: `open` and
  // `oversize` say which).
  std::optional<Message> wait(Clock::time_point deadline) {
    while (true) {
      if (auto m = next()) return m;
      if (oversize || Clock::now() >= deadline) return std::nullopt;
      if (!receive(std::min(remaining_ms(deadline), 200))) {
        open = false;
        return std::nullopt;
      }
    }
  }
};

Rendezvous::Rendezvous(const Launch& launch, std::string info, const std::function<std::string()>& make_blob,
                       double timeout_s)
    : launch_(launch) {
  infos_.assign(static_cast<size_t>(launch.world_size), "");
  infos_[static_cast<size_t>(launch.rank)] = std::move(info);
  if (launch.world_size == 1) {
    blob_ = make_blob ? make_blob() : "";
    return;
  }
  if (launch.secret.size() < kMinJobSecretChars) {
    throw UsageError(fmt::format("rendezvous: the job has no secret: set {} to the same random text of {} characters "
                                 "or more on every rank (openssl rand -hex 16); --gpus N makes one itself",
                                 kJobSecretVariable, kMinJobSecretChars));
  }
  if (infos_[static_cast<size_t>(launch.rank)].size() + launch.secret.size() + 16 > kMaxHelloBytes) {
    throw UsageError(fmt::format("rendezvous: rank {}'s hello is longer than {} bytes (a secret that long?)", launch.rank,
                                 kMaxHelloBytes));
  }
  if (launch.rank == 0) {
    serve(make_blob, timeout_s);
  } else {
    join(timeout_s);
  }
}

Rendezvous::~Rendezvous() {
  // Unwinding from an exception is a failure, not a goodbye: the others must not wait for us.
  if (std::uncaught_exceptions() > 0 && !failed_.load()) report_failure("the rank stopped on an exception");
  stopping_ = true;
  if (watchdog_.joinable()) watchdog_.join();
  if (!failed_.load()) {
    std::lock_guard lock(send_mutex_);
    for (auto& p : peers_) {
      if (p && p->open) send_message(p->fd, Kind::goodbye, "");
    }
  }
}

void Rendezvous::serve(const std::function<std::string()>& make_blob, double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  const int listener = listen_at(launch_);
  peers_.resize(static_cast<size_t>(launch_.world_size));
  int arrived = 1;
  std::vector<std::unique_ptr<Connection>> pending;  // accepted, not yet said who they are
  size_t turned_away = 0;
  std::string last_turned_away;
  // A connection that is no rank of this job is closed, said so, and the meeting goes on.
  const auto turn_away = [&](size_t i, const std::string& why) {
    ++turned_away;
    last_turned_away = fmt::format("{} from {}", why, pending[i]->peer);
    // A rank of this job with another secret learns why (a stranger learns nothing it did not send).
    send_message(pending[i]->fd, Kind::failure,
                 fmt::format("0\nrank 0 turned this connection away: {}{}", why,
                             why == kWrongSecret ? fmt::format(" (do all ranks have the same {}?)", kJobSecretVariable) : ""));
    std::fprintf(stderr, "upgradebench: rendezvous at %s: turned away a connection from %s: %s\n", where(launch_).c_str(),
                 pending[i]->peer.c_str(), why.c_str());
    pending.erase(pending.begin() + static_cast<long>(i));
  };
  while (arrived < launch_.world_size && Clock::now() < deadline) {
    std::vector<pollfd> fds{{listener, POLLIN, 0}};
    for (auto& c : pending) fds.push_back({c->fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), std::min(remaining_ms(deadline), 200)) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      sockaddr_storage from{};
      socklen_t len = sizeof from;
      const int fd = ::accept4(listener, reinterpret_cast<sockaddr*>(&from), &len, SOCK_CLOEXEC);
      if (fd >= 0) {
        auto c = std::make_unique<Connection>(fd, numeric_address(reinterpret_cast<sockaddr*>(&from), len));
        c->challenge = new_challenge();
        if (send_message(fd, Kind::challenge, c->challenge)) pending.push_back(std::move(c));
      }
      // Connections that never say who they are cannot hold every descriptor: the oldest goes.
      if (pending.size() > kMaxPending) turn_away(0, "too many connections that did not say who they are");
    }
    for (size_t i = 0; i < pending.size();) {
      Connection& c = *pending[i];
      if (!c.receive(0)) {
        pending.erase(pending.begin() + static_cast<long>(i));
        continue;
      }
      const auto m = c.next();
      if (c.oversize) {
        // Its first frame: bytes of another protocol ("GET ", "SSH-") read as a length are said as bytes.
        const std::string head = c.inbox.substr(0, 4);
        const bool text = std::all_of(head.begin(), head.end(), [](char ch) { return ch >= 0x20 && ch < 0x7f; });
        turn_away(i, text ? fmt::format("not this job's protocol (its first bytes: '{}')", printable(head))
                          : fmt::format("a message of {} bytes, more than a hello's {}", c.oversize, kMaxHelloBytes));
        continue;
      }
      if (!m) {
        ++i;
        continue;
      }
      const std::optional<Hello> hello = parse_hello(*m);
      if (!hello) {
        turn_away(i, "not a hello of this job's ranks");
        continue;
      }
      if (!same_proof(hello->proof, proof(launch_.secret, hello_text(c.challenge, hello->rank, hello->world,
                                                                     hello->challenge, hello->info)))) {
        turn_away(i, kWrongSecret);
        continue;
      }
      // It knows the secret: a rank of this job, told another world by its launcher.
      if (hello->world != launch_.world_size) {
        turn_away(i, fmt::format("rank {} says the world is {} ranks, rank 0 says {}: the launcher's WORLD_SIZE differs "
                                 "between ranks", hello->rank, hello->world, launch_.world_size));
        continue;
      }
      const int r = hello->rank;
      if (r < 1 || r >= launch_.world_size || peers_[static_cast<size_t>(r)]) {
        // Two processes as one rank (or one past the world): the job cannot meet. Every rank that
        // arrived, and this one, learns why.
        const std::string why = fmt::format("a rank of this job said it is rank {} (world of {}{}): the launcher gave "
                                            "one RANK twice, or two jobs share MASTER_PORT", r, launch_.world_size,
                                            r >= 1 && r < launch_.world_size ? ", already arrived" : "");
        send_message(c.fd, Kind::failure, "0\nrank 0 gave up the meeting: " + why);
        for (auto& p : peers_) {
          if (p) send_message(p->fd, Kind::failure, "0\nrank 0 gave up the meeting: " + why);
        }
        ::close(listener);
        throw WorkError(fmt::format("rendezvous at {}: {}", where(launch_), why));
      }
      c.rank = r;
      c.challenge = hello->challenge;  // the world's proof answers it
      c.limit = kMaxControlBytes;
      infos_[static_cast<size_t>(r)] = hello->info;
      peers_[static_cast<size_t>(r)] = std::move(pending[i]);
      pending.erase(pending.begin() + static_cast<long>(i));
      ++arrived;
    }
  }
  ::close(listener);
  if (arrived < launch_.world_size) {
    std::string missing;
    for (int r = 1; r < launch_.world_size; ++r) {
      if (!peers_[static_cast<size_t>(r)]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    }
    const std::string why = fmt::format("rank(s) {} of {} did not arrive within {:g} s", missing, launch_.world_size, timeout_s);
    // The ranks that did arrive learn why nobody sends them the world.
    for (auto& p : peers_) {
      if (p) send_message(p->fd, Kind::failure, "0\nrank 0 gave up the meeting: " + why);
    }
    // The secret is asked after only where the last one turned away had another.
    const bool secret = last_turned_away.rfind(kWrongSecret, 0) == 0;
    throw WorkError(fmt::format("rendezvous at {}: {}{}", where(launch_), why,
                                !turned_away ? ""
                                : secret     ? fmt::format(" ({} connection(s) turned away, the last: {}; do all ranks "
                                                           "have the same {}?)", turned_away, last_turned_away,
                                                           kJobSecretVariable)
                                             : fmt::format(" ({} connection(s) turned away, the last: {})", turned_away,
                                                           last_turned_away)));
  }
  blob_ = make_blob ? make_blob() : "";
  const std::string world = nlohmann::json{{"infos", infos_}, {"blob", to_hex(blob_)}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  for (auto& p : peers_) {
    if (p && !send_message(p->fd, Kind::world, proof(launch_.secret, world_text(p->challenge, world)) + "\n" + world)) {
      throw WorkError(fmt::format("rendezvous: rank {} went away before the world was sent to it", p->rank));
    }
  }
}

namespace {

// connect(2) bounded by `deadline`: a blocking one waits out the kernel's SYN retries (about two
// minutes) where rank 0's address drops packets (a firewall, a host that is down, a full backlog).
// The socket is back to blocking on return; false with `why` set when it did not connect.
bool connect_until(int fd, const sockaddr* addr, socklen_t len, Clock::time_point deadline, std::string& why) {
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  bool connected = ::connect(fd, addr, len) == 0;
  if (!connected && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int r = 0;
    while ((r = ::poll(&p, 1, std::max(0, remaining_ms(deadline)))) < 0 && errno == EINTR) {}
    if (r == 0) {
      why = "no answer: the connection was neither accepted nor refused";
    } else if (r < 0) {
      why = std::strerror(errno);
    } else {
      int error = 0;
      socklen_t size = sizeof error;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
      connected = error == 0;
      if (!connected) why = std::strerror(error);
    }
  } else if (!connected) {
    why = std::strerror(errno);
  }
  ::fcntl(fd, F_SETFL, flags);
  return connected;
}

}  // namespace

void Rendezvous::join(double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  std::unique_ptr<Connection> c;
  std::string last_error = "no answer";
  while (!c && Clock::now() < deadline) {
    addrinfo* res = nullptr;
    const int gai = ::getaddrinfo(launch_.master_addr.c_str(), std::to_string(launch_.master_port).c_str(), &hints, &res);
    if (gai != 0) {
      throw WorkError(fmt::format("rank {}: cannot resolve MASTER_ADDR {}: {}", launch_.rank, launch_.master_addr,
                                  gai_strerror(gai)));
    }
    for (addrinfo* a = res; a && !c; a = a->ai_next) {
      if (is_unspecified(a->ai_addr)) {
        ::freeaddrinfo(res);
        refuse_unspecified(launch_, a->ai_addr);
      }
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (connect_until(fd, a->ai_addr, a->ai_addrlen, deadline, last_error)) {
        c = std::make_unique<Connection>(fd);
      } else {
        ::close(fd);
      }
    }
    ::freeaddrinfo(res);
    if (!c) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // rank 0 may not listen yet
  }
  if (!c) {
    throw WorkError(fmt::format("rank {}: nobody answered at {} within {:g} s ({}; is rank 0 running?)", launch_.rank,
                                where(launch_), timeout_s, last_error));
  }
  c->rank = 0;
  const int yes = 1;
  ::setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  const std::string not_rank0 = fmt::format("not this job's rank 0 (or not the same {})", kJobSecretVariable);
  c->limit = kChallengeChars;
  const auto challenge = c->wait(deadline);
  if (!challenge || challenge->kind != Kind::challenge || challenge->payload.size() != kChallengeChars ||
      !from_hex(challenge->payload)) {
    throw WorkError(fmt::format("rank {}: {} {} within {:g} s: {}", launch_.rank, where(launch_),
                                challenge ? "sent no challenge" : c->open ? "said nothing" : "closed the connection",
                                timeout_s, not_rank0));
  }
  const std::string mine = new_challenge();
  const std::string& info = infos_[static_cast<size_t>(launch_.rank)];
  const std::string hello = fmt::format(
      "{}\n{}\n{}\n{}\n{}", launch_.rank, launch_.world_size, mine,
      proof(launch_.secret, hello_text(challenge->payload, launch_.rank, launch_.world_size, mine, info)), info);
  if (!send_message(c->fd, Kind::hello, hello)) {
    throw WorkError(fmt::format("rank {}: the connection to {} broke", launch_.rank, where(launch_)));
  }
  const auto said_hello = Clock::now();
  c->limit = world_limit(launch_.world_size);
  // Rank 0 ends the meeting: with the same timeout it gives up when this rank does, and its word
  // of why (which rank did not arrive) is waited for a little longer.
  const auto m = c->wait(deadline + std::chrono::seconds(3));
  if (m && m->kind == Kind::failure) {  // turned away, or the meeting given up: rank 0 says why
    const size_t nl = m->payload.find('\n');
    throw WorkError(fmt::format("rank {}: {} ({})", launch_.rank,
                                printable(nl == std::string::npos ? m->payload : m->payload.substr(nl + 1)), where(launch_)));
  }
  if (c->oversize) {
    throw WorkError(fmt::format("rank {}: {} sent {} bytes for the world of {} ranks, more than {}: not this job's rank 0",
                                launch_.rank, where(launch_), c->oversize, launch_.world_size, c->limit));
  }
  if (!m || m->kind != Kind::world) {
    const double after_s = std::chrono::duration<double>(Clock::now() - said_hello).count();
    throw WorkError(c->open ? fmt::format("rank {}: rank 0 at {} did not send the world within {:g} s (other ranks "
                                          "missing?)", launch_.rank, where(launch_), timeout_s)
                            : fmt::format("rank {}: rank 0 at {} closed the connection {:.1f} s after this rank's hello, "
                                          "without a word: it ended (killed, or failed before the world)",
                                          launch_.rank, where(launch_), after_s));
  }
  const size_t nl = m->payload.find('\n');
  const std::string world = nl == std::string::npos ? "" : m->payload.substr(nl + 1);
  if (nl == std::string::npos || !same_proof(m->payload.substr(0, nl), proof(launch_.secret, world_text(mine, world)))) {
    throw WorkError(fmt::format("rank {}: {} sent a world without the proof of the job's secret: {}", launch_.rank,
                                where(launch_), not_rank0));
  }
  try {
    const nlohmann::json w = nlohmann::json::parse(world);
    infos_ = w.at("infos").get<std::vector<std::string>>();
    const std::optional<std::string> blob = from_hex(w.at("blob").get<std::string>());
    if (!blob) throw std::runtime_error("the blob is not hex");
    blob_ = *blob;
  } catch (const std::exception& e) {
    throw WorkError(fmt::format("rank {}: the world {} sent is malformed ({})", launch_.rank, where(launch_), e.what()));
  }
  if (infos_.size() != static_cast<size_t>(launch_.world_size)) {
    throw WorkError(fmt::format("rank {}: the world {} sent holds {} ranks, not {}", launch_.rank, where(launch_),
                                infos_.size(), launch_.world_size));
  }
  c->limit = kMaxControlBytes;
  peers_.push_back(std::move(c));
}

void Rendezvous::watch(FailureHandler on_failure, double silence_limit_s) {
  on_failure_ = std::move(on_failure);
  silence_limit_s_ = silence_limit_s;
  for (auto& p : peers_) {
    if (p) p->last_heard = Clock::now();
  }
  if (!peers_.empty()) watchdog_ = std::thread([this] { watch_loop(); });
}

void Rendezvous::watch_loop() {
  auto last_beat = Clock::now() - std::chrono::seconds(1);
  while (!stopping_.load() && !failed_.load()) {
    std::vector<pollfd> fds;
    std::vector<Connection*> who;
    for (auto& p : peers_) {
      if (p && p->open) fds.push_back({p->fd, POLLIN, 0}), who.push_back(p.get());
    }
    if (fds.empty()) return;  // everyone said goodbye
    ::poll(fds.data(), fds.size(), 200);
    for (size_t i = 0; i < fds.size(); ++i) {
      Connection& c = *who[i];
      // What arrived before a close is read first: a rank that relays a failure and exits leaves
      // the failure and the end of its connection in one read.
      const bool closed = (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) && !c.receive(0);
      while (auto m = c.next()) {
        c.last_heard = Clock::now();
        if (m->kind == Kind::goodbye) {
          c.said_goodbye = true;
          c.open = false;
        } else if (m->kind == Kind::failure) {
          const size_t nl = m->payload.find('\n');
          int r = c.rank;
          try {
            r = std::stoi(m->payload.substr(0, nl));
          } catch (const std::exception&) {
          }
          return fail(r, nl == std::string::npos ? m->payload : m->payload.substr(nl + 1));
        }
      }
      if (c.oversize) {
        return fail(c.rank, fmt::format("rank {} sent a message of {} bytes, more than {}", c.rank, c.oversize, c.limit));
      }
      if (closed) {
        c.open = false;
        if (!c.said_goodbye) {
          return fail(c.rank, fmt::format("rank {}'s connection closed without a goodbye (the process died?)", c.rank));
        }
      }
      if (c.open && Clock::now() - c.last_heard > std::chrono::duration<double>(silence_limit_s_)) {
        return fail(c.rank, fmt::format("no heartbeat from rank {} for {:g} s", c.rank, silence_limit_s_));
      }
    }
    if (Clock::now() - last_beat >= std::chrono::seconds(1)) {
      last_beat = Clock::now();
      std::lock_guard lock(send_mutex_);
      for (auto& p : peers_) {
        if (p && p->open) send_message(p->fd, Kind::heartbeat, "");
      }
    }
  }
}

void Rendezvous::fail(int rank, const std::string& reason) {
  if (failed_.exchange(true)) return;
  {
    // Rank 0 tells every other rank; another rank tells rank 0 of its own failure, and of rank 0's
    // (a stopped rank 0 reads, when it runs again, that it was the one silent, not that this rank died).
    std::lock_guard lock(send_mutex_);
    const std::string payload = std::to_string(rank) + "\n" + reason;
    std::vector<Connection*> told;
    for (auto& p : peers_) {
      if (p && p->open && (launch_.rank == 0 || rank == launch_.rank || p->rank == rank)) {
        send_message(p->fd, Kind::failure, payload);
        // The failed rank too is told (a stopped one reads it when it runs again), not waited for.
        if (p->rank != rank) told.push_back(p.get());
      }
    }
    // The handler usually exits. A socket closed with unread input is reset, and a reset drops
    // what was not yet delivered: end our side, then read until each peer closes (it exits on the
    // news) or 2 s pass, so the failure reaches it.
    for (Connection* c : told) ::shutdown(c->fd, SHUT_WR);
    const auto deadline = Clock::now() + std::chrono::seconds(2);
    for (Connection* c : told) {
      while (Clock::now() < deadline && c->receive(std::max(1, remaining_ms(deadline)))) c->inbox.clear();
    }
  }
  if (on_failure_) on_failure_(rank, reason);
}

void Rendezvous::report_failure(const std::string& reason) { fail(launch_.rank, reason); }

}  // namespace ub::dist
