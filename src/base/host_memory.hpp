// How much memory the host can still give this process, and the check made before a large
// pinned allocation. Page-locked memory cannot be swapped out: asking for more than the host has
// ends with the process killed, or with cudaHostAlloc crawling while the kernel reclaims pages,
// so the engine checks what it will pin (the offloaded optimizer, the offloaded checkpoints)
// before the first step and refuses with the shortfall named.
//
// Available: the kernel's estimate (/proc/meminfo's MemAvailable) or, inside a container with a
// memory limit, what its cgroup leaves (cgroup v2 memory.max - memory.current, or v1
// memory.limit_in_bytes - memory.usage_in_bytes), whichever is less.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ub {

struct HostMemory {
  uint64_t available = 0;  // bytes
  std::string source;      // where the figure comes from ("MemAvailable", "cgroup memory.max")
};

// MemAvailable of a /proc/meminfo text, in bytes (nullopt when absent or malformed).
std::optional<uint64_t> meminfo_available(std::string_view meminfo);
// A cgroup's headroom from its limit and usage files' texts: nullopt when unlimited ("max", or
// v1's near-2^63 "no limit") or unreadable; 0 when over the limit.
std::optional<uint64_t> cgroup_headroom(std::string_view limit, std::string_view usage);
// This host's, read now; nullopt where /proc/meminfo cannot be read (not Linux).
std::optional<HostMemory> host_memory_available();

// What pinned memory leaves the rest of the host: the larger of 2 GiB and 5% of what is available.
uint64_t host_memory_reserve(uint64_t available);
// WorkError when `bytes` (described by `what`, e.g. "offloaded checkpoints (32 layers x 2.00 GiB)")
// do not fit in `host` less its reserve; the message, "out of host memory: ...", names the need,
// the figure and its source, the shortfall and what to change (a length that does not fit, as a
// GPU's out of memory is: `sweep --find-max` takes it so). Where the host's figure is unknown
// nothing is checked.
void check_host_memory(uint64_t bytes, std::string_view what, const std::optional<HostMemory>& host);

}  // namespace ub
