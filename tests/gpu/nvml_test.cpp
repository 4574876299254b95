// NVML is opened at run time: where the library is absent the loader says why and returns
// nothing, and the rest of the program goes on (this runs on any machine).
#include "gpu/nvml.hpp"

#include <gtest/gtest.h>

namespace ub::gpu {
namespace {

TEST(NvmlLoader, AbsentLibraryIsReportedNotFatal) {
  std::string why;
  auto n = Nvml::open(&why, "libnvidia-ml-does-not-exist.so.1");
  EXPECT_EQ(n, nullptr);
  EXPECT_NE(why.find("NVML not available"), std::string::npos) << why;
}

TEST(NvmlLoader, LibraryWithoutTheSymbolsIsRefused) {
  std::string why;
  auto n = Nvml::open(&why, "libm.so.6");  // a real library that is not NVML
  EXPECT_EQ(n, nullptr);
  EXPECT_NE(why.find("NVML has no"), std::string::npos) << why;
}

}  // namespace
}  // namespace ub::gpu
