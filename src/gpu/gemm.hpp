// Matrix products through cuBLASLt: one plan per (dtype, shape) holding its descriptors and the
// top-K algorithms of cuBLASLt's heuristic, each of which can be run (and timed) on its own.
//
// Layout "TN", the one cuBLASLt's fp8 path requires on Hopper and the one used for every dtype so
// results compare: A is stored M x K row-major (K contiguous), B is stored N x K row-major, D is
// M x N column-major; D = A * B^T... in BLAS terms op(A) = T, op(B) = N, column-major.
// FLOPs = 2*M*N*K. fp8 uses per-tensor scales (1.0) and a bf16 output, as the peer's
// torch._scaled_mm; mxfp8 / nvfp4 use block scales (all 1.0) and need sm_100.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "gpu/cuda_raii.hpp"
#include "gpu/elem.hpp"

namespace ub::gpu {


struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

// The dtypes `mamf` can run, and whether this GPU can: nullopt when it can, else why not.
std::optional<std::string> gemm_unsupported_reason(Dtype d, int cc_major, int cc_minor);
// Input and output element types for a dtype.
Elem gemm_input_elem(Dtype d);
Elem gemm_output_elem(Dtype d);
// Shape constraints of a dtype (fp8 on Hopper: K and leading dimensions multiples of 16).
std::optional<std::string> gemm_shape_problem(Dtype d, const GemmShape& s);

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

// The device memory of one product: inputs filled random normal, output, scales.
struct GemmOperands {
  GemmOperands(Dtype d, const GemmShape& s, uint64_t seed, cudaStream_t stream);
  Dtype dtype;
  GemmShape shape;
  DeviceBuffer a, b, d, scale_a, scale_b;
  // Re-randomise the output (the peer does this between timed iterations).
  void randomise_output(uint64_t seed, cudaStream_t stream) const;
};

struct AlgoInfo {
  int heuristic_rank = 0;  // 0 = cuBLASLt's first choice
  int id = -1, tile = -1, stages = -1, split_k = -1, reduction = -1, swizzle = -1, custom = -1;
  size_t workspace = 0;
  float waves = 0;
  std::string label() const;  // "algo 66 tile 18 stages 12 splitK 1"
};

class GemmPlan {
 public:
  GemmPlan(const CublasLt& lt, const GemmOperands& ops, size_t workspace_bytes, int top_k);
  ~GemmPlan();
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;

  const std::vector<AlgoInfo>& algos() const { return infos_; }
  void run(int algo, const GemmOperands& ops, const DeviceBuffer& workspace,
           cudaStream_t stream) const;

 private:
  const CublasLt& lt_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr, ld_ = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> results_;
  std::vector<AlgoInfo> infos_;
};

struct GemmCheck {
  bool ok = false;
  int samples = 0, failures = 0, nans = 0;
  double worst_ratio = 0;  // max |got - ref| / tolerance over the samples
  std::string detail;      // the worst sample, for the error message
};

// Validates D against the double-precision reference on `samples` elements (corners included).
// `corrupt_one` overwrites one sampled output first: the test that validation can fail.
GemmCheck check_gemm(const GemmOperands& ops, int samples, uint64_t seed, cudaStream_t stream,
                     bool corrupt_one = false);

}  // namespace ub::gpu
