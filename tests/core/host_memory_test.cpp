// The host's available memory as the kernel and a cgroup state it, and the check made before the
// engine pins memory: a shortfall is refused naming the need, the figure, its source and the gap;
// what fits passes; an unknown host is not refused.
#include "base/host_memory.hpp"

#include <gtest/gtest.h>

#include "base/error.hpp"

namespace ub {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

TEST(HostMemory, ReadsMemAvailableInKibibytes) {
  const char* meminfo =
      "MemTotal:       131072000 kB\nMemFree:         1000 kB\nMemAvailable:   125829120 kB\nBuffers: 10 kB\n";
  EXPECT_EQ(meminfo_available(meminfo), uint64_t{125829120} * 1024);
  EXPECT_EQ(meminfo_available("MemTotal: 1 kB\n"), std::nullopt);
  EXPECT_EQ(meminfo_available("MemAvailable: lots kB\n"), std::nullopt);
  EXPECT_EQ(meminfo_available("MemAvailable: 12\n"), std::nullopt);  // no unit
  EXPECT_EQ(meminfo_available("MemAvailable: 99999999999999999999 kB\n"), std::nullopt);
}

TEST(HostMemory, CgroupHeadroomIsLimitLessUsage) {
  EXPECT_EQ(cgroup_headroom("68719476736\n", "17179869184\n"), 48 * kGiB);
  EXPECT_EQ(cgroup_headroom("max\n", "17179869184\n"), std::nullopt);
  EXPECT_EQ(cgroup_headroom("9223372036854771712\n", "5\n"), std::nullopt);  // cgroup v1's "no limit"
  EXPECT_EQ(cgroup_headroom("100", "200"), uint64_t{0});
  EXPECT_EQ(cgroup_headroom("", "1"), std::nullopt);
}

TEST(HostMemory, ThisHostHasAFigure) {
  const std::optional<HostMemory> h = host_memory_available();
  ASSERT_TRUE(h.has_value()) << "/proc/meminfo unreadable";
  EXPECT_GT(h->available, 0u);
  EXPECT_FALSE(h->source.empty());
}

TEST(HostMemory, RefusesAShortfallNamingIt) {
  const HostMemory host{100 * kGiB, "MemAvailable"};
  EXPECT_EQ(host_memory_reserve(host.available), 5 * kGiB);
  EXPECT_EQ(host_memory_reserve(10 * kGiB), 2 * kGiB);
  EXPECT_NO_THROW(check_host_memory(95 * kGiB, "offloaded checkpoints", host));
  try {
    check_host_memory(96 * kGiB, "offloaded checkpoints (32 layers x 3.00 GiB)", host);
    FAIL() << "96 GiB of pinned memory passed on a host with 100 GiB available";
  } catch (const WorkError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("offloaded checkpoints (32 layers x 3.00 GiB) need 96.00 GiB"), std::string::npos) << m;
    EXPECT_NE(m.find("100.00 GiB available (MemAvailable)"), std::string::npos) << m;
    EXPECT_NE(m.find("1.00 GiB short"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_NO_THROW(check_host_memory(1000 * kGiB, "anything", std::nullopt));
}

}  // namespace
}  // namespace ub
