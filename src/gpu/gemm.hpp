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

#include "facts/dtype.hpp"
#include "gpu/cublaslt.hpp"
#include "gpu/cuda_raii.hpp"
#include "gpu/elem.hpp"
#include "records/mamf_records.hpp"

namespace ub::gpu {

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

// Input and output element types for a dtype.
Elem gemm_input_elem(Dtype d);
Elem gemm_output_elem(Dtype d);
// Shape constraints of a dtype (fp8 on Hopper: K and leading dimensions multiples of 16).
[[nodiscard]] std::optional<std::string> gemm_shape_problem(Dtype d, const GemmShape& s);

// The device memory of one product: inputs filled random normal, output, scales.
struct GemmOperands {
  GemmOperands(Dtype d, const GemmShape& s, uint64_t seed, cudaStream_t stream);
  Dtype dtype;
  GemmShape shape;
  DeviceBuffer a, b, d, scale_a, scale_b;
  // Re-randomise the output (the peer does this between timed iterations).
  void randomise_output(uint64_t seed, cudaStream_t stream) const;
};

// The product's descriptors and cuBLASLt's top-K algorithms for it (AlgoInfo describes each).
class GemmPlan {
 public:
  GemmPlan(const CublasLt& lt, const GemmOperands& ops, size_t workspace_bytes, int top_k);

  const std::vector<AlgoInfo>& algos() const { return infos_; }
  void run(int algo, const GemmOperands& ops, const DeviceBuffer& workspace,
           cudaStream_t stream) const;

 private:
  const CublasLt& lt_;
  MatmulProblem problem_;
  std::vector<cublasLtMatmulHeuristicResult_t> results_;
  std::vector<AlgoInfo> infos_;
};

// Validates D against the double-precision reference on `samples` elements (corners included).
// `corrupt_one` overwrites one sampled output first: the test that validation can fail.
[[nodiscard]] GemmCheck check_gemm(const GemmOperands& ops, int samples, uint64_t seed, cudaStream_t stream,
                                   bool corrupt_one = false);

}  // namespace ub::gpu
