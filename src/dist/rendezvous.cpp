// The rendezvous and the job's watchdog; see rendezvous.hpp. Messages are framed: a 4-byte
// big-endian payload length, a kind byte, the payload.
#include "dist/rendezvous.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/error.hpp"

namespace ub::dist {

namespace {

using Clock = std::chrono::steady_clock;

enum class Kind : uint8_t { hello = 1, world = 2, heartbeat = 3, failure = 4, goodbye = 5 };

struct Message {
  Kind kind;
  std::string payload;
};

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

std::string hex(const std::string& bytes) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) out += d[c >> 4], out += d[c & 15];
  return out;
}

std::string unhex(const std::string& text) {
  std::string out;
  for (size_t i = 0; i + 1 < text.size(); i += 2) out += static_cast<char>(std::stoi(text.substr(i, 2), nullptr, 16));
  return out;
}

std::string where(const Launch& l) { return fmt::format("{}:{}", l.master_addr, l.master_port); }

}  // namespace

struct Rendezvous::Connection {
  int fd = -1;
  int rank = -1;
  std::string inbox;  // bytes received, not yet a whole message
  Clock::time_point last_heard = Clock::now();
  bool open = true, said_goodbye = false;

  explicit Connection(int f) : fd(f) {}
  ~Connection() {
    if (fd >= 0) ::close(fd);
  }
  // A whole message from the inbox, if one has arrived.
  std::optional<Message> next() {
    if (inbox.size() < 5) return std::nullopt;
    uint32_t n = 0;
    std::memcpy(&n, inbox.data(), 4);
    n = ntohl(n);
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
  // The next message before `deadline`, or nullopt (timeout or closed: `open` says which).
  std::optional<Message> wait(Clock::time_point deadline) {
    while (true) {
      if (auto m = next()) return m;
      if (Clock::now() >= deadline) return std::nullopt;
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
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) throw WorkError(fmt::format("rendezvous: cannot open a socket: {}", std::strerror(errno)));
  const int one = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(launch_.master_port));
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 128) != 0) {
    const std::string why = std::strerror(errno);
    ::close(listener);
    throw WorkError(fmt::format("rendezvous: rank 0 cannot listen on port {}: {}", launch_.master_port, why));
  }
  peers_.resize(static_cast<size_t>(launch_.world_size));
  int arrived = 1;
  std::vector<std::unique_ptr<Connection>> pending;  // accepted, not yet said who they are
  while (arrived < launch_.world_size && Clock::now() < deadline) {
    std::vector<pollfd> fds{{listener, POLLIN, 0}};
    for (auto& c : pending) fds.push_back({c->fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), std::min(remaining_ms(deadline), 200)) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) pending.push_back(std::make_unique<Connection>(fd));
    }
    for (size_t i = 0; i < pending.size();) {
      Connection& c = *pending[i];
      if (!c.receive(0)) {
        pending.erase(pending.begin() + static_cast<long>(i));
        continue;
      }
      const auto m = c.next();
      if (!m) {
        ++i;
        continue;
      }
      const size_t nl = m->payload.find('\n');
      int r = -1;
      try {
        r = m->kind == Kind::hello ? std::stoi(m->payload.substr(0, nl)) : -1;
      } catch (const std::exception&) {
      }
      if (r < 1 || r >= launch_.world_size || peers_[static_cast<size_t>(r)]) {
        ::close(listener);
        throw WorkError(fmt::format("rendezvous at {}: a connection said it is rank '{}' (world of {}{})", where(launch_),
                                    m->payload.substr(0, nl), launch_.world_size,
                                    r >= 1 && r < launch_.world_size ? ", already arrived" : ""));
      }
      c.rank = r;
      infos_[static_cast<size_t>(r)] = nl == std::string::npos ? "" : m->payload.substr(nl + 1);
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
    throw WorkError(fmt::format("rendezvous at {}: rank(s) {} of {} did not arrive within {:g} s", where(launch_),
                                missing, launch_.world_size, timeout_s));
  }
  blob_ = make_blob ? make_blob() : "";
  const std::string world = nlohmann::json{{"infos", infos_}, {"blob", hex(blob_)}}.dump();
  for (auto& p : peers_) {
    if (p && !send_message(p->fd, Kind::world, world)) {
      throw WorkError(fmt::format("rendezvous: rank {} went away before the world was sent to it", p->rank));
    }
  }
}

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
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        c = std::make_unique<Connection>(fd);
      } else {
        last_error = std::strerror(errno);
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
  if (!send_message(c->fd, Kind::hello, std::to_string(launch_.rank) + "\n" + infos_[static_cast<size_t>(launch_.rank)])) {
    throw WorkError(fmt::format("rank {}: the connection to {} broke", launch_.rank, where(launch_)));
  }
  const auto m = c->wait(deadline);
  if (!m || m->kind != Kind::world) {
    throw WorkError(fmt::format("rank {}: rank 0 at {} {} within {:g} s", launch_.rank, where(launch_),
                                c->open ? "did not send the world (other ranks missing?)" : "closed the connection",
                                timeout_s));
  }
  const nlohmann::json w = nlohmann::json::parse(m->payload);
  infos_ = w.at("infos").get<std::vector<std::string>>();
  blob_ = unhex(w.at("blob").get<std::string>());
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
    // Rank 0 tells every other rank; another rank tells rank 0 of its own failure.
    std::lock_guard lock(send_mutex_);
    const std::string payload = std::to_string(rank) + "\n" + reason;
    std::vector<Connection*> told;
    for (auto& p : peers_) {
      if (p && p->open && p->rank != rank && (launch_.rank == 0 || rank == launch_.rank)) {
        send_message(p->fd, Kind::failure, payload);
        told.push_back(p.get());
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
