// The CUDA library data type of an element type (cuBLASLt and friends take cudaDataType_t).
#pragma once

#include <library_types.h>

#include "gpu/elem.hpp"

namespace ub::gpu {

constexpr cudaDataType_t cuda_data_type(Elem e) {
  switch (e) {
    case Elem::f32: return CUDA_R_32F;
    case Elem::f16: return CUDA_R_16F;
    case Elem::bf16: return CUDA_R_16BF;
    case Elem::e4m3: return CUDA_R_8F_E4M3;
    case Elem::e5m2: return CUDA_R_8F_E5M2;
    case Elem::e2m1: return CUDA_R_4F_E2M1;
  }
  return CUDA_R_32F;
}

}  // namespace ub::gpu
