// The reference for GEMM validation: for sampled output elements (i, j), the exact dot product
// of row i of A and column j of B, accumulated in double on the GPU from the very inputs cuBLASLt
// read, plus sum_k |A(i,k) B(k,j)| (the scale a tolerance is relative to) and the value the fast
// kernel wrote. Layout "TN" as the GEMM uses it: A(i,k) = A[i*K + k], B(k,j) = B[j*K + k],
// C(i,j) = C[i + j*M] (column-major M x N).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/elem.hpp"

namespace ub::gpu {

struct GemmSampleResult {
  double reference, abs_sum, got;
};

// `rows`, `cols`, `out` are device arrays of `count` entries.
void gemm_reference_samples(const void* a, const void* b, Elem in, const void* c, Elem out_elem,
                            int64_t m, int64_t n, int64_t k, const int64_t* rows,
                            const int64_t* cols, int count, GemmSampleResult* out, cudaStream_t s);

}  // namespace ub::gpu
