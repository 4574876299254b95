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

class CublasLt {
 public:
  CublasLt() { UB_CUBLAS_CHECK(cublasLtCreate(&h_)); }
  ~CublasLt() {
    if (h_) cublasLtDestroy(h_);
  }
  CublasLt(const CublasLt&) = delete;
  CublasLt& operator=(const CublasLt&) = delete;
  cublasLtHandle_t get() const { return h_; }

 private:
  cublasLtHandle_t h_ = nullptr;
};

// D = alpha op(A) op(B) + beta C with the given compute and scale types.
class MatmulDesc {
 public:
  MatmulDesc(cublasComputeType_t compute, cudaDataType_t scale) { UB_CUBLAS_CHECK(cublasLtMatmulDescCreate(&d_, compute, scale)); }
  ~MatmulDesc() {
    if (d_) cublasLtMatmulDescDestroy(d_);
  }
  MatmulDesc(const MatmulDesc&) = delete;
  MatmulDesc& operator=(const MatmulDesc&) = delete;
  MatmulDesc(MatmulDesc&& o) noexcept : d_(std::exchange(o.d_, nullptr)) {}
  template <class T>
  void set(cublasLtMatmulDescAttributes_t attr, const T& v) {
    UB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d_, attr, &v, sizeof v));
  }
  cublasLtMatmulDesc_t get() const { return d_; }

 private:
  cublasLtMatmulDesc_t d_ = nullptr;
};

// A column-major matrix of `rows` x `cols` with leading dimension `ld`.
class MatrixLayout {
 public:
  MatrixLayout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld) {
    UB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l_, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld));
  }
  ~MatrixLayout() {
    if (l_) cublasLtMatrixLayoutDestroy(l_);
  }
  MatrixLayout(const MatrixLayout&) = delete;
  MatrixLayout& operator=(const MatrixLayout&) = delete;
  MatrixLayout(MatrixLayout&& o) noexcept : l_(std::exchange(o.l_, nullptr)) {}
  cublasLtMatrixLayout_t get() const { return l_; }

 private:
  cublasLtMatrixLayout_t l_ = nullptr;
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
