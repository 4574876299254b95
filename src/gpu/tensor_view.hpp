// Views of device memory for the kernel launchers and the GEMMs: the element type travels with
// the pointer, so a launcher never takes a void* beside a precision flag. bf16 tensors are plain
// typed pointers; buffers whose precision is chosen at run time (the gradients and the AdamW
// moments: fp32 with master weights, bf16 in pure bf16) are Fp32OrBf16 views, and a launcher
// reaches their typed pointer through visit().
#pragma once

#include <cuda_bf16.h>

#include <cstddef>
#include <type_traits>

#include "gpu/elem.hpp"

namespace ub::gpu {

using bf16 = __nv_bfloat16;

template <class Void>
struct BasicFp32OrBf16 {
  Void* data = nullptr;
  Elem elem = Elem::f32;  // f32 or bf16

  BasicFp32OrBf16() = default;
  BasicFp32OrBf16(Void* d, Elem e) : data(d), elem(e) {}
  // A mutable view converts to a const one, not the other way.
  template <class Other, class = std::enable_if_t<std::is_const_v<Void> && !std::is_const_v<Other>>>
  BasicFp32OrBf16(const BasicFp32OrBf16<Other>& o) : data(o.data), elem(o.elem) {}  // NOLINT: implicit on purpose

  bool is_bf16() const { return elem == Elem::bf16; }
  size_t element_bytes() const { return is_bf16() ? sizeof(bf16) : sizeof(float); }
  // The view from element `offset` on.
  BasicFp32OrBf16 at(size_t offset) const {
    using Byte = std::conditional_t<std::is_const_v<Void>, const char, char>;
    return {static_cast<Byte*>(data) + offset * element_bytes(), elem};
  }
};
using Fp32OrBf16 = BasicFp32OrBf16<void>;
using ConstFp32OrBf16 = BasicFp32OrBf16<const void>;

inline Fp32OrBf16 fp32_view(float* p) { return {p, Elem::f32}; }
inline Fp32OrBf16 bf16_view(bf16* p) { return {p, Elem::bf16}; }

// f(typed pointer): float* or bf16* (const when the view is).
template <class Void, class F>
decltype(auto) visit(BasicFp32OrBf16<Void> v, F&& f) {
  using Float = std::conditional_t<std::is_const_v<Void>, const float, float>;
  using Bf16 = std::conditional_t<std::is_const_v<Void>, const bf16, bf16>;
  if (v.is_bf16()) return f(static_cast<Bf16*>(v.data));
  return f(static_cast<Float*>(v.data));
}

}  // namespace ub::gpu
