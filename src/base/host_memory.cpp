// The host's available memory and the pinned-allocation check; see host_memory.hpp.
#include "base/host_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "base/text.hpp"
#include "base/units.hpp"

namespace ub {

namespace {

std::optional<uint64_t> unsigned_of(std::string_view text) {
  const std::string s = trim(text);
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<std::string> read_small_file(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// cgroup v1 writes a page-rounded 2^63 - 1 for "no limit".
constexpr uint64_t kNoLimitV1 = uint64_t{1} << 62;

}  // namespace

std::optional<uint64_t> meminfo_available(std::string_view meminfo) {
  constexpr std::string_view key = "MemAvailable:";
  for (std::string_view rest = meminfo; !rest.empty();) {
    const size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    if (line.substr(0, key.size()) != key) continue;
    const std::string value = trim(line.substr(key.size()));
    if (value.size() < 3 || value.substr(value.size() - 2) != "kB") return std::nullopt;
    const std::optional<uint64_t> kib = unsigned_of(std::string_view(value).substr(0, value.size() - 2));
    if (!kib || *kib > UINT64_MAX / 1024) return std::nullopt;
    return *kib * 1024;
  }
  return std::nullopt;
}

std::optional<uint64_t> cgroup_headroom(std::string_view limit, std::string_view usage) {
  if (trim(limit) == "max") return std::nullopt;
  const std::optional<uint64_t> l = unsigned_of(limit), u = unsigned_of(usage);
  if (!l || !u || *l >= kNoLimitV1) return std::nullopt;
  return *l > *u ? *l - *u : 0;
}

std::optional<HostMemory> host_memory_available() {
  const std::optional<std::string> meminfo = read_small_file("/proc/meminfo");
  if (!meminfo) return std::nullopt;
  const std::optional<uint64_t> avail = meminfo_available(*meminfo);
  if (!avail) return std::nullopt;
  HostMemory h{*avail, "MemAvailable"};
  const struct {
    const char *limit, *usage, *name;
  } cgroups[] = {{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current", "cgroup memory.max"},
                 {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes",
                  "cgroup memory.limit_in_bytes"}};
  for (const auto& c : cgroups) {
    const std::optional<std::string> limit = read_small_file(c.limit), usage = read_small_file(c.usage);
    if (!limit || !usage) continue;
    const std::optional<uint64_t> room = cgroup_headroom(*limit, *usage);
    if (room && *room < h.available) h = {*room, c.name};
    break;
  }
  return h;
}

uint64_t host_memory_reserve(uint64_t available) { return std::max<uint64_t>(uint64_t{2} << 30, available / 20); }

void check_host_memory(uint64_t bytes, std::string_view what, const std::optional<HostMemory>& host) {
  if (!host) return;
  const uint64_t reserve = host_memory_reserve(host->available);
  const uint64_t usable = host->available > reserve ? host->available - reserve : 0;
  if (bytes <= usable) return;
  throw WorkError(fmt::format(
      "out of host memory: {} need {:.2f} GiB of pinned memory, and this host has {:.2f} GiB available ({}) of which "
      "{:.2f} GiB stays for the rest of the system: {:.2f} GiB short; train fewer tokens or layers, offload less, or "
      "free host memory",
      what, to_gib(bytes), to_gib(host->available), host->source,
      to_gib(reserve), to_gib(bytes - usable)));
}

}  // namespace ub
