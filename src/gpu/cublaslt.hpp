// cuBLASLt's objects with owners: the handle, a matmul description, matrix layouts and the
// algorithm query, shared by the GEMM benchmark (gpu/gemm.hpp) and the training engine's linear
// layers (gpu/linear_gemm.hpp). Each descriptor is destroyed by its owner whatever throws after
// it was created; copies are deleted, moves transfer ownership.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "gpu/check.hpp"

namespace ub::gpu {

// Owns one cuBLASLt object of type T, destroyed by `Destroy` (cuBLASLt's status ignored: a
// destructor does not throw).
template <class T, cublasStatus_t (*Destroy)(T)>
class LtOwner {
 public:
  LtOwner() = default;
  explicit LtOwner(T h) : h_(h) {}
  ~LtOwner() {
    if (h_) Destroy(h_);
  }
  LtOwner(const LtOwner&) = delete;
  LtOwner& operator=(const LtOwner&) = delete;
  LtOwner(LtOwner&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  T get() const { return h_; }

 protected:
  T* out() { return &h_; }  // for the create call

 private:
  T h_ = nullptr;
};

class CublasLt : public LtOwner<cublasLtHandle_t, cublasLtDestroy> {
 public:
  CublasLt() { UB_CUBLAS_CHECK(cublasLtCreate(out())); }
};

// D = alpha op(A) op(B) + beta C with the given compute and scale types.
class MatmulDesc : public LtOwner<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> {
 public:
  MatmulDesc(cublasComputeType_t compute, cudaDataType_t scale) {
    UB_CUBLAS_CHECK(cublasLtMatmulDescCreate(out(), compute, scale));
  }
  template <class V>
  void set(cublasLtMatmulDescAttributes_t attr, const V& v) {
    UB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(get(), attr, &v, sizeof v));
  }
};

// A column-major matrix of `rows` x `cols` with leading dimension `ld`.
class MatrixLayout : public LtOwner<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> {
 public:
  MatrixLayout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld) {
    UB_CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(out(), type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld));
  }
};

// The operation and its four layouts: what cuBLASLt's heuristic and every launch take.
struct MatmulProblem {
  MatmulDesc op;
  MatrixLayout a, b, c, d;
};

// cuBLASLt's heuristic: up to `count` algorithms for `p` that fit in `workspace_bytes`, best
// first, those it reports it cannot run left out. Throws WorkError when the query fails.
[[nodiscard]] std::vector<cublasLtMatmulHeuristicResult_t> heuristic_algorithms(const CublasLt& lt, const MatmulProblem& p,
                                                                               size_t workspace_bytes, int count);

}  // namespace ub::gpu
