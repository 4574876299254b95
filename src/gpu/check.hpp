// One error-check family for every GPU library (CUDA runtime, cuBLASLt; cuDNN, NCCL and CUPTI
// plug into the same generator). A failed call throws ub::WorkError naming the library, the
// expression, the library's own message, and the file and line.
#pragma once

#include <string>

#include "base/error.hpp"

namespace ub::gpu {

// Throws WorkError("<lib> error '<what>' in `<expr>` at <file>:<line>"). Defined in check.cpp so
// that .cu files need no formatting library.
[[noreturn]] void fail_check(const char* lib, const char* expr, const std::string& what,
                             const char* file, int line);

}  // namespace ub::gpu

// UB_CHECK_GEN(expr, ok, to_string, lib): evaluate once, compare with `ok`, report via
// to_string(status).
#define UB_CHECK_GEN(expr, ok, to_string, lib)                                          \
  do {                                                                                  \
    const auto ub_status_ = (expr);                                                     \
    if (ub_status_ != (ok)) {                                                           \
      ::ub::gpu::fail_check(lib, #expr, to_string(ub_status_), __FILE__, __LINE__);     \
    }                                                                                   \
  } while (0)

#define UB_CUDA_CHECK(expr) UB_CHECK_GEN(expr, cudaSuccess, cudaGetErrorString, "CUDA")
#define UB_CUBLAS_CHECK(expr) \
  UB_CHECK_GEN(expr, CUBLAS_STATUS_SUCCESS, cublasLtGetStatusString, "cuBLASLt")
// After a kernel launch: the launch error, if any.
#define UB_CUDA_CHECK_LAUNCH() UB_CUDA_CHECK(cudaGetLastError())
