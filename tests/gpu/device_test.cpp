// Device enumeration: on a GPU machine every device has a name, a UUID and memory; on a machine
// without one the list is empty with a reason, and nothing throws.
#include "gpu/device.hpp"

#include <gtest/gtest.h>

namespace ub::gpu {
namespace {

TEST(Device, ListNeverThrowsAndExplainsAnEmptyList) {
  const DeviceList list = list_devices();
  if (list.devices.empty()) {
    EXPECT_FALSE(list.why_none.empty());
    GTEST_SKIP() << "no GPU here: " << list.why_none;
  }
  for (const DeviceInfo& d : list.devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_EQ(d.uuid.rfind("GPU-", 0), 0u) << d.uuid;
    EXPECT_GT(d.memory_bytes, int64_t{1} << 30);
    EXPECT_GT(d.sm_count, 0);
    EXPECT_GT(d.l2_bytes, 0);
  }
  EXPECT_FALSE(cuda_runtime_version().empty());
}

}  // namespace
}  // namespace ub::gpu
