// Element types of device buffers, as the kernels and cuBLASLt see them (no CUDA header, so
// host code can name them). e2m1 is packed two to a byte.
#pragma once

#include <cstddef>
#include <string_view>

namespace ub::gpu {

enum class Elem { f32, f16, bf16, e4m3, e5m2, e2m1 };

constexpr double bytes_per_element(Elem e) {
  switch (e) {
    case Elem::f32: return 4;
    case Elem::f16:
    case Elem::bf16: return 2;
    case Elem::e4m3:
    case Elem::e5m2: return 1;
    case Elem::e2m1: return 0.5;
  }
  return 0;
}

constexpr size_t buffer_bytes(Elem e, size_t count) {
  return e == Elem::e2m1 ? (count + 1) / 2 : count * static_cast<size_t>(bytes_per_element(e));
}

std::string_view to_string(Elem e);

}  // namespace ub::gpu
