// Reading the launcher's variables; see launch.hpp.
#include "dist/launch.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "base/error.hpp"
#include "base/text.hpp"


namespace ub::dist {

namespace {

std::optional<std::string> get(const Environment& env, const char* key) {
  const auto it = env.find(key);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

// Whether the launcher set `key`, even to nothing: a launcher's pair present with an empty value is
// an error, never a job of one process.
bool present(const Environment& env, const char* key) { return env.count(key) > 0; }

int number(const Environment& env, const char* key, int lo, int hi) {
  const auto text = get(env, key);
  if (!text) throw UsageError(fmt::format("launcher: {} is {}", key, present(env, key) ? "set but empty" : "not set"));
  char* end = nullptr;
  const long v = std::strtol(text->c_str(), &end, 10);
  if (end == text->c_str() || *end != '\0' || v < lo || v > hi) {
    throw UsageError(fmt::format("launcher: {}={} is not a whole number from {} to {}", key, *text, lo, hi));
  }
  return static_cast<int>(v);
}

int number_or(const Environment& env, const char* key, int fallback, int lo, int hi) {
  return present(env, key) ? number(env, key, lo, hi) : fallback;
}

constexpr int kMaxRanks = 1 << 20;

void check(const Launch& l) {
  if (l.rank >= l.world_size) {
    throw UsageError(fmt::format("launcher ({}): rank {} is outside a world of {}", l.launcher, l.rank, l.world_size));
  }
  if (l.local_world_size > l.world_size) {
    throw UsageError(fmt::format("launcher ({}): {} ranks on this node, more than the world's {}", l.launcher,
                                 l.local_world_size, l.world_size));
  }
  if (l.local_rank >= l.local_world_size) {
    throw UsageError(fmt::format("launcher ({}): local rank {} is outside {} ranks on this node", l.launcher,
                                 l.local_rank, l.local_world_size));
  }
  if (l.master_addr.empty()) throw UsageError(fmt::format("launcher ({}): no master address", l.launcher));
}

}  // namespace

std::string first_slurm_host(const std::string& nodelist) {
  // The first entry is up to the first comma outside brackets.
  size_t depth = 0, end = 0;
  for (; end < nodelist.size(); ++end) {
    const char c = nodelist[end];
    if (c == '[') ++depth;
    if (c == ']') {
      if (depth == 0) break;
      --depth;
    }
    if (c == ',' && depth == 0) break;
  }
  const std::string first = nodelist.substr(0, end);
  const size_t open = first.find('[');
  const auto refuse = [&](const char* why) {
    return UsageError(fmt::format("launcher (slurm): SLURM_JOB_NODELIST='{}' is not a node list: {}; set MASTER_ADDR "
                                  "to rank 0's host", printable(nodelist), why));
  };
  if (first.empty()) throw refuse("its first entry is empty");
  if (open != std::string::npos && first.back() != ']') throw refuse("a '[' without its ']'");
  const std::string prefix = first.substr(0, open == std::string::npos ? first.size() : open);
  // Slurm names nodes by host name: a name of digits alone ("[01]" read as "01") would be taken by
  // the resolver for an IPv4 address (0.0.0.1), so a name needs a letter before its numbers.
  if (prefix.find_first_not_of("0123456789") == std::string::npos) throw refuse("a node name needs a name before its number");
  if (prefix.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != std::string::npos) {
    throw refuse("a node name holds only letters, digits, '.', '-' and '_'");
  }
  if (open == std::string::npos) return first;
  // prefix[07-09,12]: the prefix and the first number of the first range, zero padding kept.
  const std::string ranges = first.substr(open + 1, first.size() - open - 2);
  const size_t stop = ranges.find_first_of("-,");
  const std::string low = ranges.substr(0, stop);
  if (low.empty() || low.find_first_not_of("0123456789") != std::string::npos) throw refuse("a range in brackets is of numbers");
  return prefix + low;
}

Launch launch_from(const Environment& env) {
  Launch l;
  if (present(env, "RANK") && present(env, "WORLD_SIZE")) {
    l.launcher = "torchrun";
    l.world_size = number(env, "WORLD_SIZE", 1, kMaxRanks);
    l.rank = number(env, "RANK", 0, kMaxRanks);
    l.local_rank = number_or(env, "LOCAL_RANK", l.rank, 0, kMaxRanks);
    l.local_world_size = number_or(env, "LOCAL_WORLD_SIZE", l.world_size, 1, kMaxRanks);
    l.node_rank = number_or(env, "GROUP_RANK", 0, 0, kMaxRanks);
    if (!get(env, "MASTER_ADDR")) throw UsageError("launcher (torchrun): MASTER_ADDR is not set");
    l.master_addr = *get(env, "MASTER_ADDR");
    l.master_port = number(env, "MASTER_PORT", 1, 65535);
  } else if (present(env, "SLURM_PROCID") && present(env, "SLURM_NTASKS")) {
    l.launcher = "slurm";
    l.world_size = number(env, "SLURM_NTASKS", 1, kMaxRanks);
    l.rank = number(env, "SLURM_PROCID", 0, kMaxRanks);
    l.local_rank = number_or(env, "SLURM_LOCALID", 0, 0, kMaxRanks);
    l.node_rank = number_or(env, "SLURM_NODEID", 0, 0, kMaxRanks);
    if (present(env, "SLURM_NNODES")) {
      const int nodes = number(env, "SLURM_NNODES", 1, kMaxRanks);
      if (l.node_rank >= nodes) {
        throw UsageError(fmt::format("launcher (slurm): SLURM_NODEID={} is outside SLURM_NNODES={}", l.node_rank, nodes));
      }
    }
    if (const auto per_node = get(env, "SLURM_NTASKS_PER_NODE")) {
      // "4" or "4(x2)": tasks per node as Slurm prints it.
      const Environment first = {{"SLURM_NTASKS_PER_NODE", per_node->substr(0, per_node->find('('))}};
      l.local_world_size = number(first, "SLURM_NTASKS_PER_NODE", 1, kMaxRanks);
    } else {
      const int nodes = number_or(env, "SLURM_NNODES", 1, 1, kMaxRanks);
      l.local_world_size = (l.world_size + nodes - 1) / nodes;
    }
    if (auto addr = get(env, "MASTER_ADDR")) {
      l.master_addr = *addr;
    } else if (auto list = get(env, "SLURM_JOB_NODELIST")) {
      l.master_addr = first_slurm_host(*list);
    } else {
      throw UsageError("launcher (slurm): neither MASTER_ADDR nor SLURM_JOB_NODELIST is set");
    }
    l.master_port = number_or(env, "MASTER_PORT", 29500, 1, 65535);
  } else if (present(env, "OMPI_COMM_WORLD_RANK") && present(env, "OMPI_COMM_WORLD_SIZE")) {
    l.launcher = "openmpi";
    l.world_size = number(env, "OMPI_COMM_WORLD_SIZE", 1, kMaxRanks);
    l.rank = number(env, "OMPI_COMM_WORLD_RANK", 0, kMaxRanks);
    l.local_rank = number_or(env, "OMPI_COMM_WORLD_LOCAL_RANK", 0, 0, kMaxRanks);
    l.local_world_size = number_or(env, "OMPI_COMM_WORLD_LOCAL_SIZE", l.world_size, 1, kMaxRanks);
    l.node_rank = number_or(env, "OMPI_COMM_WORLD_NODE_RANK", 0, 0, kMaxRanks);
    if (auto addr = get(env, "MASTER_ADDR")) {
      l.master_addr = *addr;
    } else if (l.local_world_size != l.world_size) {
      throw UsageError("launcher (openmpi): MASTER_ADDR is not set (needed when the ranks span several nodes: "
                       "mpirun -x MASTER_ADDR=<rank 0's host>)");
    }
    l.master_port = number_or(env, "MASTER_PORT", 29500, 1, 65535);
  }
  if (auto secret = get(env, kJobSecretVariable)) l.secret = *secret;
  check(l);
  return l;
}

Environment launch_environment() {
  static const char* const kKeys[] = {
      "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
      "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NNODES", "SLURM_NTASKS_PER_NODE",
      "SLURM_JOB_NODELIST", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
      "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_NODE_RANK", kJobSecretVariable};
  Environment env;
  for (const char* k : kKeys) {
    if (const char* v = std::getenv(k)) env[k] = v;
  }
  return env;
}

}  // namespace ub::dist
