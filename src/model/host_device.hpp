// UB_HD marks the few formulas that are compiled for both the host (the CPU reference, tests)
// and the device (the training engine's kernels), so that each is written exactly once.
#pragma once

#if defined(__CUDACC__)
#define UB_HD __host__ __device__ __forceinline__
#else
#define UB_HD inline
#endif
