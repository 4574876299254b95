// GPU tests skip, with the reason, where no GPU is visible (CI, laptops).
#pragma once

#include <gtest/gtest.h>

#include "gpu/device.hpp"

#define UB_REQUIRE_GPU()                                               \
  do {                                                                 \
    const ::ub::gpu::DeviceList ub_list_ = ::ub::gpu::list_devices();  \
    if (ub_list_.devices.empty()) {                                    \
      GTEST_SKIP() << "no GPU here: " << ub_list_.why_none;            \
    }                                                                  \
  } while (0)
